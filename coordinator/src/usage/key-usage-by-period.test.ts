import { afterEach, expect, test } from 'vitest';
import { newId } from '../db/ids.js';
import { describeBackends, type TestDatabase } from '../testing/index.js';
import { keyUsageByPeriod } from './key-usage-by-period.js';
import { rollUsage } from './roll-usage.js';

const HOUR_MS = 3_600_000;
const at = (day: string, hour = 12) => Date.parse(`${day}T00:00:00Z`) + hour * HOUR_MS;

/** One usage row of `cost_nano` at `ms` (alice's key k1 unless said otherwise). */
function usageRow(ms: number, cost: number, who: { user?: string; key?: string | null } = {}) {
  return {
    id: newId(ms),
    request_id: `req_${ms}_${cost}`,
    user_id: who.user ?? 'alice',
    key_id: who.key === undefined ? 'k1' : who.key,
    model: 'gpumesh/tiny-chat',
    node_id: '0xaa',
    kind: 'chat',
    prompt_tokens: 10,
    completion_tokens: 5,
    cost_nano: cost,
    provider_nano: cost - 1,
    fee_nano: 1,
    status: 'completed',
    created_at: ms,
    day: new Date(ms).toISOString().slice(0, 10),
  };
}

describeBackends('keyUsageByPeriod', (backend) => {
  let store: TestDatabase | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  test('default: the UTC day, the week from Monday and the month, the same before and after the roll', async () => {
    store = await backend.open('key-periods');
    // Wednesday 2026-04-15: the week began Monday the 13th, the month on the 1st.
    const now = at('2026-04-15');
    await store.db
      .insertInto('usage_records')
      .values([
        usageRow(at('2026-04-15', 1), 100),
        // Half a minute old: inside the roll's lag, so read from the rows after the roll.
        usageRow(now - 30_000, 7),
        usageRow(at('2026-04-13', 0), 20),
        usageRow(at('2026-04-12', 23), 3),
        usageRow(at('2026-04-01', 0), 400),
        usageRow(at('2026-03-31', 23), 5_000),
        // Another key of the same user, another user's k1: neither counts.
        usageRow(at('2026-04-15', 2), 60_000, { key: 'k2' }),
        usageRow(at('2026-04-15', 3), 70_000, { user: 'bob' }),
        usageRow(at('2026-04-15', 4), 80_000, { key: null }),
      ])
      .execute();
    const expected = { dailyNano: 107n, weeklyNano: 127n, monthlyNano: 530n };
    const read = () => keyUsageByPeriod(store!.db, { userId: 'alice', keyId: 'k1', now });
    expect(await read()).toEqual(expected);
    expect(await rollUsage(store.db, { now })).toEqual({ folded: 8, caughtUp: true });
    expect(await read()).toEqual(expected);
  });

  test("behavior: a week that began last month counts last month's days; the month does not", async () => {
    store = await backend.open('key-periods-week');
    // Wednesday 2026-04-01: the week began Monday 2026-03-30.
    const now = at('2026-04-01');
    await store.db
      .insertInto('usage_records')
      .values([
        usageRow(at('2026-04-01', 9), 1),
        usageRow(at('2026-03-31', 9), 20),
        usageRow(at('2026-03-30', 0), 300),
        usageRow(at('2026-03-29', 23), 4_000),
      ])
      .execute();
    await rollUsage(store.db, { now: at('2026-03-31', 12) });
    expect(await keyUsageByPeriod(store.db, { userId: 'alice', keyId: 'k1', now })).toEqual({
      dailyNano: 1n,
      weeklyNano: 321n,
      monthlyNano: 1n,
    });
  });
});
