import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { providerAccountId } from '../db/tables/ledger.js';
import { USAGE_STATUS, type UsageStatus } from '../db/tables/usage.js';
import { isErrorBody } from '../errors.js';
import { createTestApp, describeBackends, signIn, type TestApp } from '../testing/index.js';
import { ACTIVITY_CSV_COLUMNS, exportActivityCsv } from './export-activity-csv.js';
import type { ActivityRow } from './list-activity.js';

const DAY_MS = 86_400_000;
/** 2026-03-10T12:00:00Z: the tests' days are counted from here. */
const START = Date.UTC(2026, 2, 10, 12);

type Bill = {
  model?: string;
  keyId?: string | null;
  nodeId?: string;
  promptTokens?: number;
  completionTokens?: number;
  providerNano?: bigint;
  latencyMs?: number;
  finishReason?: string | null;
  status?: UsageStatus;
  /** The usage row's time (default: the clock's now). */
  at?: number;
};

describeBackends('activity routes', (backend) => {
  let t: TestApp;
  let seq = 0;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'activity' });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A new user signed in at START: its headers, its id, and bill() to make one of its requests. */
  const session = async () => {
    t.clock.set(START);
    const token = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const userId = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub: string })
      .sub;
    const headers = { authorization: `Bearer ${token}` };
    await t.ledger.credit({ userId, amountNano: 1_000_000_000_000n, ref: `activity-${userId}` });
    /**
     * One billed request through the ledger (hold, then settlement with its usage row), as the
     * router bills one. Returns its request id once the hold is placed; the settlement may still be
     * queued (`settled` resolves when it is written).
     */
    const bill = async (b: Bill = {}) => {
      const requestId = `req_${++seq}`;
      const hold = await t.ledger.reserve({ userId, amountNano: 1_000_000n });
      if (!hold.ok) throw new Error('no credits');
      const settled = t.ledger.settle({
        reservationId: hold.reservationId,
        providerNano: b.providerNano ?? 12_000n,
        feeNano: 345n,
        providerAccountId: providerAccountId(b.nodeId ?? 'node-a'),
        usage: {
          requestId,
          userId,
          keyId: b.keyId ?? null,
          model: b.model ?? 'tiny/chat',
          nodeId: b.nodeId ?? 'node-a',
          kind: 'chat',
          promptTokens: b.promptTokens ?? 10,
          completionTokens: b.completionTokens ?? 20,
          status: b.status ?? USAGE_STATUS.completed,
          now: b.at ?? t.clock.now(),
          latencyMs: b.latencyMs ?? 400,
          finishReason: b.finishReason === undefined ? 'stop' : b.finishReason,
        },
      });
      return { requestId, settled };
    };
    const billed = async (b: Bill = {}) => {
      const { requestId, settled } = await bill(b);
      await settled;
      return requestId;
    };
    const createKey = async (name: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/api/router/keys', headers, payload: { name } });
      expect(res.statusCode).toBe(200);
      return (res.json() as { id: string }).id;
    };
    const get = (query = '') => t.app.inject({ method: 'GET', url: `/api/router/activity${query}`, headers });
    const page = async (query = '') => {
      const res = await get(query);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { data: ActivityRow[]; nextCursor: string | null };
    };
    const csv = (query = '') =>
      t.app.inject({ method: 'GET', url: `/api/router/activity.csv${query}`, headers });
    return { userId, headers, bill, billed, createKey, get, page, csv };
  };

  test('default: the newest requests first, each with its model, node, key, tokens, cost and latency', async () => {
    const s = await session();
    const keyId = await s.createKey('laptop');
    const first = await s.billed({ keyId });
    t.clock.advance(1_000);
    const second = await s.billed({
      model: 'acme/big',
      nodeId: 'node-b',
      promptTokens: 7,
      completionTokens: 50,
      providerNano: 1_000_000n,
      latencyMs: 2_000,
      finishReason: 'length',
    });
    const { data, nextCursor } = await s.page();
    expect(nextCursor).toBeNull();
    expect(data.map((r) => r.id)).toEqual([second, first]);
    expect(data[0]).toEqual({
      id: second,
      time: new Date(START + 1_000).toISOString(),
      model: 'acme/big',
      nodeId: 'node-b',
      keyId: null,
      keyName: null,
      kind: 'chat',
      promptTokens: 7,
      completionTokens: 50,
      totalTokens: 57,
      // The hold (1,000,000 nanousd) caps the charge: provider + fee is never more than it.
      cost: 0.001,
      costNano: '1000000',
      latencyMs: 2_000,
      tokensPerSecond: 25,
      finishReason: 'length',
      status: 'completed',
    });
    expect(data[1]).toMatchObject({
      id: first,
      time: new Date(START).toISOString(),
      keyId,
      keyName: 'laptop',
      cost: 0.000012345,
      costNano: '12345',
      tokensPerSecond: 50,
    });
    expect((await s.get()).headers['cache-control']).toBe('no-store');
  });

  test('behavior: a client reads its own writes (the ledger settles before the page is read)', async () => {
    const s = await session();
    const { requestId, settled } = await s.bill();
    const { data } = await s.page();
    expect(data.map((r) => r.id)).toEqual([requestId]);
    await settled;
  });

  test('behavior: cursor pages cover every row exactly once, also rows of the same millisecond', async () => {
    const s = await session();
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      ids.push(await s.billed());
      if (i % 4 === 3) t.clock.advance(1); // groups of four share a created_at
    }
    const seen: ActivityRow[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=5' : `?limit=5&cursor=${cursor}`;
      const res = await s.page(query);
      expect(res.data.length).toBeLessThanOrEqual(5);
      seen.push(...res.data);
      cursor = res.nextCursor;
      if (++pages === 1) {
        // Requests that settle while the client pages land above the first page, never in a later one.
        t.clock.advance(1);
        await s.billed();
      }
    } while (cursor !== null);
    expect(pages).toBe(5);
    expect(seen.map((r) => r.id).sort()).toEqual([...ids].sort());
    const times = seen.map((r) => Date.parse(r.time));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // The page limits: 500 at most, 50 by default.
    expect((await s.page('?limit=500')).data).toHaveLength(24);
    for (let i = 0; i < 30; i++) await s.billed();
    const byDefault = await s.page();
    expect(byDefault.data).toHaveLength(50);
    expect(byDefault.nextCursor).not.toBeNull();
    expect((await s.page(`?cursor=${byDefault.nextCursor}`)).data).toHaveLength(4);
  });

  test('behavior: filters by day range, model and key, each with the cursor', async () => {
    const s = await session();
    const a = await s.createKey('a');
    const b = await s.createKey('b');
    const day = (n: number) => new Date(START + n * DAY_MS).toISOString().slice(0, 10);
    const made: { id: string; day: number; model: string; keyId: string }[] = [];
    for (let n = 0; n < 4; n++) {
      for (const [model, keyId] of [
        ['m/one', a],
        ['m/two', b],
        ['m/one', b],
      ] as const) {
        // Both ends of each UTC day: a range includes its first and its last day whole.
        const at = START + n * DAY_MS + (model === 'm/two' ? 11.5 * 3_600_000 : -12 * 3_600_000);
        made.push({ id: await s.billed({ model, keyId, at }), day: n, model, keyId });
      }
    }
    const all = async (query: string) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await s.page(`${query}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        ids.push(...res.data.map((r) => r.id));
        cursor = res.nextCursor;
      } while (cursor);
      return ids.sort();
    };
    const want = (keep: (r: (typeof made)[number]) => boolean) =>
      made
        .filter(keep)
        .map((r) => r.id)
        .sort();
    expect(await all(`?from=${day(1)}&to=${day(2)}`)).toEqual(want((r) => r.day === 1 || r.day === 2));
    expect(await all(`?from=${day(3)}`)).toEqual(want((r) => r.day === 3));
    expect(await all(`?to=${day(0)}`)).toEqual(want((r) => r.day === 0));
    expect(await all('?model=m/one')).toEqual(want((r) => r.model === 'm/one'));
    expect(await all(`?key=${b}`)).toEqual(want((r) => r.keyId === b));
    expect(await all(`?key=${b}&model=m%2Fone&from=${day(2)}&to=${day(2)}`)).toEqual(
      want((r) => r.keyId === b && r.model === 'm/one' && r.day === 2),
    );
    expect(await all('?model=nothing')).toEqual([]);
  });

  test("behavior: another user's requests never appear, not even through its cursor", async () => {
    const me = await session();
    const other = await session();
    const mine = [await me.billed(), await me.billed()];
    for (let i = 0; i < 3; i++) await other.billed({ model: 'other/model' });
    const theirs = await other.page('?limit=1');
    const page = await me.page();
    expect(page.data.map((r) => r.id).sort()).toEqual([...mine].sort());
    // A cursor is only a position: with it, this user still sees only its own rows.
    const through = await me.page(`?cursor=${theirs.nextCursor}`);
    expect(through.data.every((r) => mine.includes(r.id))).toBe(true);
    expect((await me.page('?model=other/model')).data).toEqual([]);
    const csv = await me.csv();
    expect(csv.body).not.toContain('other/model');
    expect(parseCsv(csv.body)).toHaveLength(3);
  });

  test('behavior: the CSV holds the same rows, RFC 4180 quoted, as an attachment named by its days', async () => {
    const s = await session();
    const keyId = await s.createKey('team, prod');
    // Key names made before today's name rules could hold a quote; the export must survive any text.
    await t.db.updateTable('api_keys').set({ name: 'team, "prod"' }).where('id', '=', keyId).execute();
    await s.billed({
      keyId,
      model: 'org/odd,"model"\nv2',
      finishReason: null,
      status: 'client_disconnected',
    });
    t.clock.advance(DAY_MS);
    await s.billed({ model: '=cmd|calc', providerNano: 100n, latencyMs: 0 });
    const res = await s.csv();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="gpumesh-activity-start-${new Date(START + DAY_MS).toISOString().slice(0, 10)}.csv"`,
    );
    expect(res.headers['x-gpumesh-truncated']).toBe('false');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.split('\r\n')[0]).toBe(ACTIVITY_CSV_COLUMNS.join(','));
    expect(res.body).toContain(',"team, ""prod""",');
    expect(res.body).toContain(',"org/odd,""model""\nv2",');
    const rows = parseCsv(res.body);
    expect(rows[0]).toEqual([...ACTIVITY_CSV_COLUMNS]);
    const { data } = await s.page();
    expect(rows.slice(1)).toEqual(
      data.map((r) => [
        r.time,
        r.id,
        r.model === '=cmd|calc' ? `'=cmd|calc` : r.model, // a formula is defused
        r.nodeId,
        r.keyId ?? '',
        r.keyName ?? '',
        r.kind,
        String(r.promptTokens),
        String(r.completionTokens),
        String(r.totalTokens),
        r.costNano === '445' ? '0.000000445' : '0.000012345', // exact decimals, never 4.45e-7
        r.latencyMs === null ? '' : String(r.latencyMs),
        r.tokensPerSecond === null ? '' : String(r.tokensPerSecond),
        r.finishReason ?? '',
        r.status,
      ]),
    );
    expect(rows[1]![11]).toBe('0');
    expect(rows[2]).toContain('team, "prod"');
    expect(rows[2]!.at(-1)).toBe('client_disconnected');

    const day = new Date(START).toISOString().slice(0, 10);
    const oneDay = await s.csv(`?from=${day}&to=${day}`);
    expect(oneDay.headers['content-disposition']).toBe(
      `attachment; filename="gpumesh-activity-${day}-${day}.csv"`,
    );
    expect(parseCsv(oneDay.body)).toHaveLength(2);
    expect(parseCsv((await s.csv('?model=nothing')).body)).toEqual([[...ACTIVITY_CSV_COLUMNS]]);
  });

  test('behavior: an export holds at most maxRows, the newest, read a page at a time', async () => {
    const s = await session();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push(await s.billed());
      t.clock.advance(1);
    }
    const read = async (maxRows: number) => {
      const csv = await exportActivityCsv(t.app.ctx, { userId: s.userId, filters: {}, maxRows, pageRows: 2 });
      const chunks: string[] = [];
      for await (const chunk of csv.chunks) chunks.push(chunk);
      return { truncated: csv.truncated, chunks, rows: parseCsv(chunks.join('')).slice(1) };
    };
    const five = await read(5);
    expect(five.truncated).toBe(true);
    expect(five.chunks).toHaveLength(4); // the header, then pages of 2, 2 and 1
    expect(five.rows.map((r) => r[1])).toEqual(ids.slice(2).reverse());
    const seven = await read(7);
    expect(seven.truncated).toBe(false);
    expect(seven.rows.map((r) => r[1])).toEqual([...ids].reverse());
  });

  test('error: bad limits, cursors, days and unknown fields are 400 in the common shape; no session is 401', async () => {
    const s = await session();
    await s.billed();
    const cases: [string, string | null][] = [
      ['?limit=0', 'limit'],
      ['?limit=501', 'limit'],
      ['?limit=abc', 'limit'],
      ['?limit=-1', 'limit'],
      ['?limit=1e2', 'limit'],
      ['?cursor=nonsense', 'cursor'],
      [`?cursor=${Buffer.from('1.x;--').toString('base64url')}`, 'cursor'],
      ['?from=2026-02-30', 'from'],
      ['?to=26-01-01', 'to'],
      ['?from=2026-03-02&to=2026-03-01', 'from'],
      ['?key=no%20such%20key!', 'key'],
      ['?model=a%00b', 'model'],
      ['?page=2', null],
      ['?limit=1&limit=2', 'limit'],
    ];
    for (const [query, param] of cases) {
      const res = await s.get(query);
      expect(res.statusCode, query).toBe(400);
      expect(isErrorBody(res.json()), query).toBe(true);
      expect(res.json().error.code, query).toBe('invalid_request');
      if (param) expect(res.json().error.param, query).toBe(param);
    }
    for (const query of ['?from=2026-02-30', '?limit=5', '?cursor=x']) {
      const res = await s.csv(query);
      expect(res.statusCode, query).toBe(400);
      expect(isErrorBody(res.json())).toBe(true);
    }
    for (const url of ['/api/router/activity', '/api/router/activity.csv']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('invalid_credential');
    }
  });
});

/** RFC 4180 records (CRLF between records; quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || record.length > 0) throw new Error('the CSV does not end with CRLF');
  return records;
}
