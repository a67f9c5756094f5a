import { describe, expect, test } from 'vitest';
import { joinContinuedIds, withChunkIds } from './continued-ids.js';

describe('withChunkIds', () => {
  test('default: the ids of chunks that carry them, in order; a chunk of no token adds none', () => {
    let ids = withChunkIds([], 2, [5, 6]);
    ids = withChunkIds(ids, 0, undefined);
    ids = withChunkIds(ids, 1, [7]);
    expect(ids).toEqual([5, 6, 7]);
  });

  test('behavior: a chunk with tokens but no ids, or another number of them, loses the ids for good', () => {
    expect(withChunkIds([1], 1, undefined)).toBeUndefined();
    expect(withChunkIds([1], 2, [3])).toBeUndefined();
    expect(withChunkIds(undefined, 1, [3])).toBeUndefined();
  });
});

describe('joinContinuedIds', () => {
  test('default: the prompt without the delivered ids; the completion the delivered ids, then the new ones', () => {
    expect(joinContinuedIds([7, 8], { prompt: [1, 2, 3, 7, 8], completion: [9, 10] })).toEqual({
      prompt: [1, 2, 3],
      completion: [7, 8, 9, 10],
    });
  });

  test('error: a continuing prompt that does not end with the delivered ids, or no ids, joins to nothing', () => {
    expect(joinContinuedIds([7, 8], { prompt: [1, 2, 3, 8, 7], completion: [9] })).toBeUndefined();
    expect(joinContinuedIds([7, 8], { prompt: [7, 8], completion: [9] })).toBeUndefined();
    expect(joinContinuedIds([7], undefined)).toBeUndefined();
  });
});
