import { expect, test } from 'vitest';
import { formatVerified } from './render-network-page.js';

test('default: a node in good standing: its status and last check', () => {
  expect(formatVerified(null)).toBe('—');
  expect(formatVerified({ status: 'probation', reputation: 50, lastCheckAt: null })).toBe(
    'probation · not checked yet',
  );
  expect(
    formatVerified({
      status: 'trusted',
      reputation: 90,
      lastCheckAt: '2026-03-10T12:03:00.000Z',
      passed: 5,
      failed: 0,
      lastFailure: null,
    }),
  ).toBe('trusted · checked 12:03 UTC');
});

test('behavior: a node that failed a check says how many failed, when the last did and why', () => {
  expect(
    formatVerified({
      status: 'probation',
      reputation: 41,
      lastCheckAt: '2026-03-10T12:03:00.000Z',
      passed: 2,
      failed: 1,
      lastFailure: { at: '2026-03-10T12:01:00.000Z', reason: 'claimed ids do not match the text' },
    }),
  ).toBe(
    'probation · checked 12:03 UTC · 1 of 3 checks failed · last failed 12:01 UTC: claimed ids do not match the text',
  );
});
