import { expect, test } from 'vitest';
import { MIN_PICKS_FOR_SHARE, RECENT_PICKS, RecentPicks } from './recent-picks.js';

test('default: a node share of the model recent picks', () => {
  const picks = new RecentPicks();
  for (let i = 0; i < 20; i++) picks.note('m', i % 4 === 0 ? 'a' : 'b');
  expect(picks.shareOf('m', 'a')).toBe(0.25);
  expect(picks.shareOf('m', 'b')).toBe(0.75);
  expect(picks.shareOf('other', 'a')).toBe(0);
});

test('behavior: too few picks say nothing; only the last RECENT_PICKS count', () => {
  const picks = new RecentPicks();
  for (let i = 0; i < MIN_PICKS_FOR_SHARE - 1; i++) picks.note('m', 'a');
  expect(picks.shareOf('m', 'a')).toBe(0);
  picks.note('m', 'a');
  expect(picks.shareOf('m', 'a')).toBe(1);
  for (let i = 0; i < RECENT_PICKS; i++) picks.note('m', 'b');
  expect(picks.shareOf('m', 'a')).toBe(0);
});
