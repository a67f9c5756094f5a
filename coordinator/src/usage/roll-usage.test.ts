import { afterEach, expect, test } from 'vitest';
import { newId } from '../db/ids.js';
import { readTokensServed } from '../pages/read-tokens-served.js';
import { readEarnings } from '../provider/read-earnings.js';
import { describeBackends, type TestDatabase } from '../testing/index.js';
import { readNodeJobs } from './read-node-jobs.js';
import { HOUR_MS, idFloor, ROLL_LAG_MS, rollUsage } from './roll-usage.js';
import { summarizeUsage } from './summarize-usage.js';

const DAY_MS = 86_400_000;
const START = Date.UTC(2026, 0, 1);
const NODES = ['0xaa', '0xbb', '0xCc'];
const STATUSES = ['completed', 'completed', 'completed', 'node_failed', 'client_disconnected'];

/** A small deterministic generator, so a failure repeats. */
function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

function usageRow(rnd: () => number, at: number) {
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const provider = Math.floor(rnd() * 1_000_000);
  return {
    id: newId(at),
    request_id: `r-${Math.floor(rnd() * 1e12)}`,
    user_id: pick(['alice', 'bob']),
    key_id: pick([null, 'k1', 'k2']),
    model: pick(['tiny', 'small']),
    node_id: pick(NODES),
    kind: pick(['chat', 'embedding', 'transcription']),
    prompt_tokens: Math.floor(rnd() * 5_000),
    completion_tokens: Math.floor(rnd() * 5_000),
    cost_nano: provider + 100,
    provider_nano: provider,
    fee_nano: 100,
    status: pick(STATUSES),
    created_at: at,
    day: new Date(at).toISOString().slice(0, 10),
  };
}

/** The rollups' sums against the same sums over the raw rows, folded so far (id ≤ cursor). */
async function expectRollupsMatchRows(store: TestDatabase) {
  const { db } = store;
  const { cursor_id: cursor, ...totals } = await db
    .selectFrom('usage_roll_state')
    .select(['cursor_id', 'requests', 'prompt_tokens', 'completion_tokens'])
    .executeTakeFirstOrThrow();
  const rows = await db.selectFrom('usage_records').selectAll().where('id', '<=', cursor).execute();
  const sum = <K extends string>(
    keyOf: (r: (typeof rows)[number]) => K,
    columns: Record<string, (r: (typeof rows)[number]) => number>,
  ) => {
    const out = new Map<string, Record<string, number>>();
    for (const r of rows) {
      const acc = out.get(keyOf(r)) ?? Object.fromEntries(Object.keys(columns).map((c) => [c, 0]));
      for (const [c, f] of Object.entries(columns)) acc[c]! += f(r);
      out.set(keyOf(r), acc);
    }
    return out;
  };
  const n = (v: unknown) => Number(v);
  const nodeColumns = {
    requests: () => 1,
    completed: (r: (typeof rows)[number]) => (r.status === 'completed' ? 1 : 0),
    node_failed: (r: (typeof rows)[number]) => (r.status === 'node_failed' ? 1 : 0),
    prompt_tokens: (r: (typeof rows)[number]) => n(r.prompt_tokens),
    completion_tokens: (r: (typeof rows)[number]) => n(r.completion_tokens),
    cost_nano: (r: (typeof rows)[number]) => n(r.cost_nano),
    provider_nano: (r: (typeof rows)[number]) => n(r.provider_nano),
    fee_nano: (r: (typeof rows)[number]) => n(r.fee_nano),
  };
  const asMap = <T extends Record<string, unknown>>(list: T[], keyOf: (r: T) => string, columns: string[]) =>
    new Map(list.map((r) => [keyOf(r), Object.fromEntries(columns.map((c) => [c, n(r[c])]))]));
  const userDays = await db.selectFrom('usage_user_days').selectAll().execute();
  expect(
    asMap(userDays, (r) => `${r.user_id} ${r.day} ${r.key_id} ${r.model} ${r.kind}`, [
      'requests',
      'prompt_tokens',
      'completion_tokens',
      'cost_nano',
    ]),
  ).toEqual(
    sum((r) => `${r.user_id} ${r.day} ${r.key_id ?? ''} ${r.model} ${r.kind}`, {
      requests: () => 1,
      prompt_tokens: (r) => n(r.prompt_tokens),
      completion_tokens: (r) => n(r.completion_tokens),
      cost_nano: (r) => n(r.cost_nano),
    }),
  );
  const hours = await db.selectFrom('usage_node_hours').selectAll().execute();
  expect(
    asMap(hours, (r) => `${r.node_id} ${n(r.hour)} ${r.model} ${r.day}`, Object.keys(nodeColumns)),
  ).toEqual(
    sum(
      (r) => `${r.node_id} ${n(r.created_at) - (n(r.created_at) % HOUR_MS)} ${r.model} ${r.day}`,
      nodeColumns,
    ),
  );
  const days = await db.selectFrom('usage_node_days').selectAll().execute();
  expect(asMap(days, (r) => `${r.node_id} ${r.day} ${r.model}`, Object.keys(nodeColumns))).toEqual(
    sum((r) => `${r.node_id} ${r.day} ${r.model}`, nodeColumns),
  );
  expect({
    requests: n(totals.requests),
    prompt: n(totals.prompt_tokens),
    completion: n(totals.completion_tokens),
  }).toEqual({
    requests: rows.length,
    prompt: rows.reduce((s, r) => s + n(r.prompt_tokens), 0),
    completion: rows.reduce((s, r) => s + n(r.completion_tokens), 0),
  });
  return rows.length;
}

describeBackends('rollUsage', (backend) => {
  let store: TestDatabase | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  test('default: the rollups equal the rows folded, in batches, and the cursor stops at the lag', async () => {
    store = await backend.open('roll');
    const rnd = random(1);
    const now = START + 20 * DAY_MS;
    const rows = Array.from({ length: 400 }, () => usageRow(rnd, START + Math.floor(rnd() * 20 * DAY_MS)));
    // Some inside the lag: not folded yet.
    const recent = Array.from({ length: 10 }, () => usageRow(rnd, now - Math.floor(rnd() * ROLL_LAG_MS)));
    await store.db
      .insertInto('usage_records')
      .values([...rows, ...recent])
      .execute();
    expect(await rollUsage(store.db, { now, batchRows: 150 })).toEqual({ folded: 150, caughtUp: false });
    expect(await rollUsage(store.db, { now, batchRows: 150 })).toEqual({ folded: 150, caughtUp: false });
    expect(await rollUsage(store.db, { now, batchRows: 150 })).toEqual({ folded: 100, caughtUp: true });
    expect(await rollUsage(store.db, { now, batchRows: 150 })).toEqual({ folded: 0, caughtUp: true });
    expect(await expectRollupsMatchRows(store)).toBe(400);
    expect(await rollUsage(store.db, { now: now + ROLL_LAG_MS })).toEqual({ folded: 10, caughtUp: true });
    expect(await expectRollupsMatchRows(store)).toBe(410);
  });

  test('behavior: rows inserted late, within the lag, are folded by a later roll', async () => {
    store = await backend.open('rolllate');
    const rnd = random(2);
    let now = START + DAY_MS;
    let inserted = 0;
    for (let round = 0; round < 8; round++) {
      // Rows created up to a lag ago, committed only now (late), and fresh ones.
      const late = Array.from({ length: 20 }, () => usageRow(rnd, now - Math.floor(rnd() * ROLL_LAG_MS)));
      const fresh = Array.from({ length: 20 }, () => usageRow(rnd, now + Math.floor(rnd() * 10_000)));
      await store.db
        .insertInto('usage_records')
        .values([...late, ...fresh])
        .execute();
      inserted += 40;
      await rollUsage(store.db, { now, batchRows: 7 + round * 5 });
      while (!(await rollUsage(store.db, { now, batchRows: 13 })).caughtUp) {}
      await expectRollupsMatchRows(store);
      now += 17_000 + Math.floor(rnd() * 20_000);
    }
    await rollUsage(store.db, { now: now + 2 * ROLL_LAG_MS, batchRows: 10_000 });
    expect(await expectRollupsMatchRows(store)).toBe(inserted);
  });

  test('behavior: concurrent rollers never count a row twice', async () => {
    store = await backend.open('rollconc');
    const rnd = random(3);
    const rows = Array.from({ length: 600 }, () => usageRow(rnd, START + Math.floor(rnd() * 5 * DAY_MS)));
    await store.db.insertInto('usage_records').values(rows).execute();
    const db = store.db;
    const roller = async () => {
      let folded = 0;
      for (;;) {
        const r = await rollUsage(db, { now: START + 6 * DAY_MS, batchRows: 40 });
        folded += r.folded;
        if (r.caughtUp) return folded;
      }
    };
    const folded = await Promise.all([roller(), roller(), roller(), roller()]);
    expect(folded.reduce((a, b) => a + b, 0)).toBe(600);
    expect(await expectRollupsMatchRows(store)).toBe(600);
  });

  test('behavior: the readers give the raw rows’ sums at any cursor and window edge', async () => {
    store = await backend.open('rollread');
    const { db } = store;
    const rnd = random(4);
    const end = START + 10 * DAY_MS;
    const rows = Array.from({ length: 500 }, () => usageRow(rnd, START + Math.floor(rnd() * 10 * DAY_MS)));
    await db.insertInto('usage_records').values(rows).execute();
    await db
      .insertInto('node_owners')
      .values(NODES.slice(1).map((id) => ({ node_id: id.toLowerCase(), owner: 'owner', linked_at: 0 })))
      .execute();
    const ledger = { idle: async () => {} } as never;
    const read = async () => {
      const windows: [number, number][] = [
        [START + 3 * DAY_MS + 1_234_567, START + 7 * DAY_MS + 999],
        [START + 2 * HOUR_MS + 5, START + 2 * HOUR_MS + 9 * 60_000],
        [START + 5 * HOUR_MS, START + 30 * HOUR_MS - 1],
        [START, end],
      ];
      const earnings = [];
      for (const [from, to] of windows)
        for (const by of ['day', 'node', 'model'] as const)
          earnings.push(await readEarnings(db, { owner: 'owner', from, to, by }));
      return {
        earnings,
        summary: await summarizeUsage(
          { db, ledger },
          { userId: 'alice', from: '2026-01-02', to: '2026-01-08' },
        ),
        jobs: [...(await readNodeJobs(db, NODES, START + 4 * DAY_MS + 7_777_777))].sort(),
        tokens: await readTokensServed({ db, ledger }),
      };
    };
    const raw = await read();
    expect(raw.earnings.flat().length).toBeGreaterThan(0);
    expect(raw.jobs.length).toBe(3);
    // Rolled in steps: after each, every reader still gives what it gave from the raw rows alone.
    for (const upTo of [START + 2 * DAY_MS + 77, START + 5 * DAY_MS + 3 * HOUR_MS, end + ROLL_LAG_MS]) {
      while (!(await rollUsage(db, { now: upTo, batchRows: 60 })).caughtUp) {}
      expect(await read()).toEqual(raw);
    }
    expect(await db.selectFrom('usage_roll_state').select('cursor_id').executeTakeFirstOrThrow()).not.toEqual(
      {
        cursor_id: '',
      },
    );
  });

  test('idFloor: ids created before a time sort below it', () => {
    const at = Date.UTC(2026, 5, 1, 12);
    expect(newId(at - 1) < idFloor(at)).toBe(true);
    expect(newId(at) > idFloor(at)).toBe(true);
    expect(newId(at + 1) > idFloor(at)).toBe(true);
  });
});
