/**
 * Reputation on SQLite and PostgreSQL: the score from stored verifications, usage violations, jobs
 * (billed, failed, missed) and uptime; the guard's sweep suspends a connected node (the protocol's reference node) that
 * scores below the threshold, tells it why and refuses it at reconnect, and leaves a good one.
 */
import type { AddressInfo } from 'node:net';
import { startReferenceNode } from '@gpumesh/protocol/conformance';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HUB_PATH } from '../../hub/hub-plugin.js';
import { recordUsageViolation } from '../../router/record-usage-violation.js';
import { createTestApp, describeBackends, type TestApp, until } from '../../testing/index.js';
import { reputationsOf, scoreOf } from './reputation.js';

describe('scoreOf', () => {
  const base = {
    verifications: { passed: 0, failed: 0, lastAt: null },
    violations: 0,
    jobs: { completed: 0, failed: 0, missed: 0 },
    uptime7d: 0,
  };

  test('default: a new node is in the middle; a good record is high; each part lowers it', () => {
    expect(scoreOf(base)).toBe(50); // 100 × (0.4·½ + 0.2·1 + 0.2·½ + 0.2·0)
    const good = {
      verifications: { passed: 20, failed: 0, lastAt: 1 },
      violations: 0,
      jobs: { completed: 500, failed: 2, missed: 0 },
      uptime7d: 0.99,
    };
    expect(scoreOf(good)).toBeGreaterThanOrEqual(96);
    expect(scoreOf({ ...good, violations: 3 })).toBeLessThan(scoreOf(good));
    expect(scoreOf({ ...good, jobs: { completed: 10, failed: 90, missed: 0 } })).toBeLessThan(scoreOf(good));
    expect(scoreOf({ ...good, jobs: { completed: 500, failed: 2, missed: 400 } })).toBeLessThan(
      scoreOf(good),
    );
    expect(scoreOf({ ...good, verifications: { passed: 20, failed: 5, lastAt: 1 } })).toBeLessThan(
      scoreOf(good),
    );
  });

  test('behavior: uptime alone cannot take a clean node below the default threshold (25)', () => {
    expect(scoreOf({ ...base, uptime7d: 0 })).toBeGreaterThanOrEqual(25);
  });
});

describeBackends('reputation guard', (backend) => {
  let t: TestApp;
  let node: ReturnType<typeof startReferenceNode> | undefined;

  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'reputation',
      overrides: { trust: { minReputation: 25, reputationIntervalMs: 0 } },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    node = startReferenceNode({
      url: `ws://127.0.0.1:${port}${HUB_PATH}`,
      tokenDelayMs: 0,
      reconnectDelayMs: 50,
    });
    await until(() => t.app.hub.index.node(node!.nodeId)?.state === 'online', 30_000);
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    await t?.close();
  });

  test('behavior: a node with a clean record stays; after usage violations and failed jobs it is suspended and refused', async () => {
    const id = node!.nodeId.toLowerCase();
    expect(await t.app.reputation.sweep()).toEqual([]);

    // Its record turns bad: 9 inflated usage reports and 30 jobs it failed this week.
    const now = Date.now();
    for (let i = 0; i < 9; i++) await recordUsageViolation(t.db, { nodeId: id, now });
    await t.db
      .insertInto('usage_records')
      .values(
        Array.from({ length: 30 }, (_, i) => ({
          id: `rep-${i}`,
          request_id: `req-rep-${i}`,
          user_id: 'u',
          key_id: null,
          model: 'm',
          node_id: id,
          kind: 'chat',
          prompt_tokens: 1,
          completion_tokens: 0,
          cost_nano: 0,
          provider_nano: 0,
          fee_nano: 0,
          status: 'node_failed',
          created_at: now - i,
          day: new Date(now).toISOString().slice(0, 10),
          finish_reason: null,
        })),
      )
      .execute();
    // And the router saw it miss 4 jobs (no first token in time, or died): counted per day.
    const entry = [...t.app.hub.index.node(node!.nodeId)!.entries.values()][0]!;
    for (let i = 0; i < 4; i++) t.app.router.noteMiss(entry);
    await until(async () => {
      const row = await t.db
        .selectFrom('node_misses')
        .selectAll()
        .where('node_id', '=', id)
        .executeTakeFirst();
      return Number(row?.misses ?? 0) === 4;
    });
    const r = (await reputationsOf(t.db, [id], Date.now(), () => true)).get(id)!;
    expect(r).toMatchObject({ violations: 9, jobs: { completed: 0, failed: 30, missed: 4 } });
    expect(r.score).toBeLessThan(25);

    expect(await t.app.reputation.sweep()).toEqual([node!.nodeId]);
    const standing = await t.db
      .selectFrom('node_trust')
      .selectAll()
      .where('node_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(standing.status).toBe('suspended');
    expect(standing.reason).toMatch(
      /^reputation \d+ is below 25: .*9 usage reports over the bound.*0 completed \/ 30 failed \/ 4 missed/,
    );
    // Disconnected, and refused when it tries again (the reference node keeps reconnecting).
    await until(() => t.app.hub.index.node(node!.nodeId) === undefined, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(t.app.hub.index.node(node!.nodeId)).toBeUndefined();
    // Not slashed: slashing takes failed verifications.
    expect(await t.db.selectFrom('slashes').selectAll().execute()).toEqual([]);
  });
});
