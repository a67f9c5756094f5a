import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeBackends, type TestDatabase } from '../testing/index.js';
import { NodeSessionLog, uptimeOf } from './node-sessions.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The tests' now: 2026-03-10T12:00:00Z. */
const NOW = Date.UTC(2026, 2, 10, 12);
const DAY = { from: NOW - DAY_MS, to: NOW };

describeBackends('uptimeOf', (backend) => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await backend.open('uptime');
  });
  afterAll(async () => {
    await d?.close();
  });

  /** Logs sessions of `nodeId` as one replica would: [start, end] pairs, end undefined for open. */
  const sessions = async (nodeId: string, spans: [number, number | undefined][]) => {
    let at = 0;
    const log = new NodeSessionLog(d.db, 'replica-a', () => at);
    const failed = (error: unknown) => {
      throw error;
    };
    for (const [start, end] of spans) {
      at = start;
      log.note('up', nodeId, failed);
      if (end === undefined) continue;
      at = end;
      log.note('down', nodeId, failed);
    }
    at = NOW;
    await log.renew();
  };

  test('default: a node that connected a minute ago and stayed is up 100 %, not a minute of a day', async () => {
    await sessions('0xnew', [[NOW - 60_000, undefined]]);
    const uptime = await uptimeOf(d.db, ['0xNEW'], DAY, () => true);
    expect(uptime.get('0xnew')).toBe(1);
  });

  test('behavior: measured over the part of the window since the node was first seen', async () => {
    // First seen an hour ago, up for its first half hour, then gone.
    await sessions('0xhalf', [[NOW - HOUR_MS, NOW - HOUR_MS / 2]]);
    // First seen two days ago: the whole day counts, and it was up 12 h of it.
    await sessions('0xold', [
      [NOW - 2 * DAY_MS, NOW - 2 * DAY_MS + HOUR_MS],
      [NOW - DAY_MS / 2, undefined],
    ]);
    const uptime = await uptimeOf(d.db, ['0xhalf', '0xold', '0xnever'], DAY, (id) => id === '0xold');
    expect(Object.fromEntries(uptime)).toEqual({ '0xhalf': 0.5, '0xold': 0.5, '0xnever': 0 });
  });

  test('behavior: wholeWindow measures a new node over the whole window (reputation: a new node starts low)', async () => {
    await sessions('0xfresh', [[NOW - DAY_MS / 4, undefined]]);
    const uptime = await uptimeOf(d.db, ['0xfresh'], DAY, () => true, { wholeWindow: true });
    expect(uptime.get('0xfresh')).toBe(0.25);
  });
});
