import Fastify from 'fastify';
import { afterEach, expect, test } from 'vitest';
import { newId } from '../db/ids.js';
import { createTestClock, describeBackends, type TestDatabase } from '../testing/index.js';
import { keepUsageRolled } from './keep-usage-rolled.js';
import { ROLL_LAG_MS } from './roll-usage.js';

function row(at: number, i: number) {
  return {
    id: newId(at),
    request_id: `r${i}`,
    user_id: 'user',
    key_id: null,
    model: 'tiny',
    node_id: '0xaa',
    kind: 'chat',
    prompt_tokens: 10,
    completion_tokens: i,
    cost_nano: 5,
    provider_nano: 4,
    fee_nano: 1,
    status: 'completed',
    created_at: at,
    day: new Date(at).toISOString().slice(0, 10),
  };
}

describeBackends('keepUsageRolled', (backend) => {
  let store: TestDatabase | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  test('default: folds the backlog at start, then what settles later, and stops on close', async () => {
    store = await backend.open('keeproll');
    const { db } = store;
    const clock = createTestClock(Date.UTC(2026, 3, 1));
    const old = Array.from({ length: 30 }, (_, i) => row(clock.now() - 2 * ROLL_LAG_MS - i * 1000, i));
    await db.insertInto('usage_records').values(old).execute();
    const app = Fastify({ logger: false });
    keepUsageRolled(app, { db, clock }, { intervalMs: 20 });
    await app.ready();
    const state = () =>
      db.selectFrom('usage_roll_state').select(['cursor_id', 'requests']).executeTakeFirstOrThrow();
    await expect.poll(async () => Number((await state()).requests)).toBe(30);
    const later = row(clock.now() + 1_000, 99);
    await db.insertInto('usage_records').values(later).execute();
    // Not before the lag has passed.
    clock.advance(ROLL_LAG_MS / 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(Number((await state()).requests)).toBe(30);
    clock.advance(ROLL_LAG_MS);
    await expect.poll(async () => (await state()).cursor_id).toBe(later.id);
    await app.close();
    expect(Number((await state()).requests)).toBe(31);
  });
});
