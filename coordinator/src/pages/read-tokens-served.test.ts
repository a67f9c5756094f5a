import { afterEach, expect, test } from 'vitest';
import { describeBackends, type TestDatabase } from '../testing/index.js';
import { readTokensServed } from './read-tokens-served.js';

describeBackends('readTokensServed', (backend) => {
  let store: TestDatabase | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  test('default', async () => {
    store = await backend.open('tokens');
    expect(await readTokensServed({ db: store.db, ledger: { idle: async () => {} } })).toEqual({
      prompt: 0n,
      completion: 0n,
    });
    const row = (i: number, prompt: number, completion: number) => ({
      id: `u${i}`,
      request_id: `r${i}`,
      user_id: 'user',
      key_id: null,
      model: 'tiny',
      node_id: 'node',
      kind: 'chat',
      prompt_tokens: prompt,
      completion_tokens: completion,
      cost_nano: 1,
      provider_nano: 1,
      fee_nano: 0,
      status: 'completed',
      created_at: 1,
      day: '2026-01-01',
    });
    await store.db
      .insertInto('usage_records')
      .values([row(1, 10, 5), row(2, 3_000_000_000, 7)])
      .execute();
    expect(await readTokensServed({ db: store.db, ledger: { idle: async () => {} } })).toEqual({
      prompt: 3_000_000_010n,
      completion: 12n,
    });
  });
});
