import { expect, test } from 'vitest';
import { decodeActivityCursor, encodeActivityCursor } from './activity-cursor.js';

test('default: a cursor decodes to the position it was made from', () => {
  const position = { createdAt: 1_767_225_600_123, id: '019b7a2c-1f00-7abc-8def-0123456789ab' };
  const cursor = encodeActivityCursor(position);
  expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(decodeActivityCursor(cursor)).toEqual(position);
});

test('error: anything else is null', () => {
  const good = encodeActivityCursor({ createdAt: 5, id: 'u1' });
  for (const bad of [
    '',
    'nope',
    `${good}=`,
    `${good}A`,
    good.slice(0, -1),
    Buffer.from('5.u1;drop').toString('base64url'),
    Buffer.from('-5.u1').toString('base64url'),
    Buffer.from('99999999999999999.u1').toString('base64url'),
    Buffer.from('5.').toString('base64url'),
    'x'.repeat(201),
    'a+b/',
  ]) {
    expect(decodeActivityCursor(bad), bad).toBeNull();
  }
});
