/**
 * The trust arena (issue 29): the coordinator's verification against honest nodes at the extremes
 * of sampling and against every liar we could write, on real parts — the node daemon in process on
 * node-llama-cpp (CPU), the coordinator (SQLite) verifying with its own verifier, real /v1 client
 * traffic. Seeded; the figures are printed and gathered in bench/RESULTS.md.
 *
 * Honest: two daemons, one on the default model (`npm start`'s: mean next-token entropy ≈ 2 nats at
 * temperature 1) and one on a sharper one, checked ARENA_CHECKS times in all with every sampling
 * setting a client can ask for — temperatures 0, 0.7, 1 and 1.5, top_p 0.9, presence and frequency
 * penalties, stop sequences, JSON-schema output and forced tool calls, chat and completion,
 * streamed or not. None may fail a check or be suspended; the share of checks that alone would
 * fail a 5 % test is printed beside its bound (5 %).
 *
 * Liars, each the real daemon around a runtime that lies, claiming the default model's sha256:
 * other weights; random token ids; no ids; ids that don't match the text; one genuine completion
 * replayed; a canary detector answering honestly only what looks like an old canary. Each must be
 * suspended (its owner's slash ordered) within LIAR_MAX_CHECKS checks, having taken at most its
 * probation share of the clients' requests meanwhile.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tinyModelPath } from '@gpumesh/node';
import { type LlamaDaemon, startLlamaDaemon } from '@gpumesh/node/testing';
import { CONVICTION_THRESHOLD } from '@gpumesh/protocol/internal';
import type { FastifyInstance } from 'fastify';
import { getLlama, type LlamaModel } from 'node-llama-cpp';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID } from '../coordinator/src/db/tables/ledger.js';
import { applyEntry } from '../coordinator/src/ledger/apply-entry.js';
import { reconcile } from '../coordinator/src/reconcile/reconcile.js';
import {
  expectBooksBalanced,
  type TestDatabase,
  testBackends,
  until,
} from '../coordinator/src/testing/index.js';
import type { CanaryOutcome } from '../coordinator/src/trust/checks/canary-runner.js';
import { startLocalVerifier } from '../coordinator/src/trust/checks/local-verifier.js';
import { PROBATION_WINDOW } from '../coordinator/src/trust/standing/probation.js';
import { newApiClient } from './support/api-client.js';
import { arenaJob, seeded } from './support/arena-jobs.js';
import { LIARS, type Lie } from './support/arena-liars.js';
import { USD } from './support/expected-charge.js';

const ARENA_CHECKS = Number(process.env.GPUMESH_ARENA_CHECKS ?? 2_000);
/** A liar is suspended within this many checks of it (two checks at the cap convict). */
const LIAR_MAX_CHECKS = 4;
/** Client requests sent between two checks of a liar. */
const REQUESTS_PER_CHECK = 5;
const PROBATION_SHARE = 0.2;
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
const DEFAULT_ID = 'arena/default';
const SHARP_ID = 'arena/sharp';

describe('trust arena: honest nodes at every setting, and every liar', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumesh-arena-'));
  let db: TestDatabase;
  let app: FastifyInstance;
  let base = '';
  let tokenizer: LlamaModel;
  const llamaPromise = getLlama({ gpu: false });
  const honest: Record<string, LlamaDaemon> = {};
  const stops: (() => Promise<void>)[] = [];
  let verifier: Awaited<ReturnType<typeof startLocalVerifier>> | undefined;
  let apiKey = '';
  let userId = '';

  /** A folder holding one model file. */
  function modelsDir(name: string, file: string): string {
    const d = path.join(dir, name);
    mkdirSync(d, { recursive: true });
    copyFileSync(file, path.join(d, 'model.gguf'));
    return d;
  }

  beforeAll(async () => {
    const llama = await llamaPromise;
    const defaultFile = await tinyModelPath();
    const sharpFile = await tinyModelPath({ seed: 11, outputStd: 1 });
    const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
    const entry = (id: string, f: string) => ({
      id,
      name: id,
      family: 'chat',
      contextLength: 2048,
      files: [{ quant: 'F32', file: 'model.gguf', sizeBytes: statSync(f).size, sha256: sha(f) }],
      priceBand: { inputPerMTok: ['0', '1000000000'], outputPerMTok: ['0', '2000000000'] },
    });
    const catalogFile = path.join(dir, 'catalog.json');
    writeFileSync(
      catalogFile,
      JSON.stringify({ models: [entry(DEFAULT_ID, defaultFile), entry(SHARP_ID, sharpFile)] }),
    );
    db = await sqlite.open('arena');
    const config = loadConfig({
      overrides: {
        dataDir: db.dataDir,
        logLevel: 'silent',
        catalogFile,
        rateLimit: { enabled: false },
        trust: {
          canaryIntervalMs: 0,
          spotCheckRate: 0,
          secondOpinionRate: 0,
          passesToTrust: 5,
          probationShare: PROBATION_SHARE,
          reputationIntervalMs: 0,
        },
      },
    });
    app = await buildApp({ config, store: db.store, logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const verifierModels = path.join(dir, 'verifier-models');
    mkdirSync(verifierModels, { recursive: true });
    copyFileSync(defaultFile, path.join(verifierModels, 'default.gguf'));
    copyFileSync(sharpFile, path.join(verifierModels, 'sharp.gguf'));
    verifier = await startLocalVerifier({
      modelsDir: verifierModels,
      stateDir: path.join(dir, 'verifier-state'),
    });
    app.canaries.setLocalVerifier(verifier);
    await applyEntry(db.db, {
      accountId: PLATFORM_ACCOUNT_ID,
      kind: ENTRY_KINDS.adjustment,
      amount: 10n * USD,
      ref: 'arena-seed',
      now: Date.now(),
    });
    tokenizer = await llama.loadModel({ modelPath: defaultFile });
    honest.default = await startLlamaDaemon({
      coordinator: base,
      modelsDir: modelsDir('honest-default', defaultFile),
      llama,
    });
    honest.sharp = await startLlamaDaemon({
      coordinator: base,
      modelsDir: modelsDir('honest-sharp', sharpFile),
      llama,
    });
    await until(() => ['default', 'sharp'].every((k) => targetOf(honest[k]!.nodeId) !== undefined), 60_000);
    // A client with credit and a key: the liars' share of real traffic is measured on it.
    ({ key: apiKey, userId } = await newApiClient(app, {
      keyName: 'arena',
      creditNano: 10n * USD,
      creditRef: 'arena-client',
    }));
  }, 180_000);

  afterAll(async () => {
    for (const stop of stops) await stop().catch(() => {});
    for (const d of Object.values(honest)) await d.stop();
    if (app) {
      await app.ctx.ledger.idle();
      await expectBooksBalanced(app.ctx);
      // After six convictions with refunds the ledger reconciles (no chain here: the ledger's part).
      const report = await reconcile({
        db: db.db,
        services: undefined,
        staleHoldMs: 60_000,
        now: Date.now(),
      });
      expect(report.differences).toEqual([]);
      await app.close();
    }
    await verifier?.close();
    await tokenizer?.dispose();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const targetOf = (nodeId: string) => app.canaries.targets().find((t) => t.node.nodeId === nodeId);

  test(`behavior: ${ARENA_CHECKS} checks of honest nodes at every sampling setting: none fails, none is suspended`, async () => {
    const outcomes: { model: string; outcome: CanaryOutcome }[] = [];
    const runs = Object.entries(honest).map(async ([name, daemon], n) => {
      const random = seeded(1000 + n);
      const model = name === 'default' ? DEFAULT_ID : SHARP_ID;
      for (let i = 0; i < ARENA_CHECKS / 2; i++) {
        const target = targetOf(daemon.nodeId);
        expect(target, `${name} is still connected`).toBeDefined();
        const outcome = await app.canaries.runOnce(target!, { job: arenaJob(model, i, random) });
        outcomes.push({ model, outcome });
      }
    });
    await Promise.all(runs);
    const verified = outcomes.flatMap(({ model, outcome }) =>
      outcome.status === 'verified' ? [{ model, ...outcome }] : [],
    );
    // An answer of no tokens (end of text at once) has nothing to check: not a skip of the check.
    const empty = outcomes.filter(
      (o) => o.outcome.status === 'skipped' && o.outcome.reason.startsWith('no completion'),
    );
    const skipped = outcomes.filter((o) => o.outcome.status === 'skipped' && !empty.includes(o));
    const failures = verified.filter((o) => o.judgement.failure);
    const scored = verified.filter((o) => o.judgement.scored);
    const significant = scored.filter((o) => !o.judgement.passed);
    const worst = Math.max(...scored.map((o) => o.judgement.logE));
    const standings = await db.db.selectFrom('node_trust').selectAll().execute();
    const maxEvidence = Math.max(0, ...standings.map((s) => Number(s.evidence_e4) / 10_000));
    console.log(
      `arena: honest ${verified.length} checks (${scored.length} scored, ${verified.length - scored.length} grammar-constrained, ${empty.length} empty answers, ${skipped.length} skipped), ` +
        `0 may fail: ${failures.length} failed outright, ${significant.length} alone over a 5 % test (${((100 * significant.length) / Math.max(1, scored.length)).toFixed(2)} %, bound 5 %); ` +
        `worst ln e-value ${worst.toFixed(2)}, highest running evidence ${maxEvidence.toFixed(2)} of ${CONVICTION_THRESHOLD.toFixed(1)} nats`,
    );
    console.log(
      failures.map((f) => f.judgement.failure),
      new Set(skipped.map((s) => (s.outcome as { reason: string }).reason)),
    );
    expect(skipped.length).toBeLessThanOrEqual(ARENA_CHECKS * 0.01);
    expect(verified.length + empty.length).toBeGreaterThanOrEqual(ARENA_CHECKS * 0.99);
    expect(failures.map((f) => f.judgement.failure)).toEqual([]);
    expect(standings.filter((s) => s.status === 'suspended')).toEqual([]);
    expect(maxEvidence).toBeLessThan(CONVICTION_THRESHOLD / 2);
    expect(significant.length / scored.length).toBeLessThanOrEqual(0.05);
  }, 1_800_000);
  /** A liar's daemon: A's and B's files, offering only A's (its sha256: the default model's). */
  async function startLiar(name: string, lie: Lie, owner: `0x${string}`): Promise<LlamaDaemon> {
    const home = path.join(dir, `liar-${name.replace(/\W+/g, '-')}`);
    mkdirSync(home, { recursive: true });
    copyFileSync(await tinyModelPath(), path.join(home, 'real.gguf'));
    copyFileSync(await tinyModelPath({ seed: 202 }), path.join(home, 'junk.gguf'));
    const daemon = await startLlamaDaemon({
      coordinator: base,
      modelsDir: home,
      ownerPrivateKey: owner,
      llama: await llamaPromise,
      wrap: (runtime) => {
        const ids = { real: 'real', junk: 'junk' };
        const lied = lie(runtime, ids, { detokenize: (t) => tokenizer.detokenize(t) });
        return {
          ...runtime,
          ...lied,
          load: (p) => runtime.load(p),
          models: () => runtime.models().filter((m) => m.id === ids.real),
          run: lied.run ?? ((job) => runtime.run(job)),
          alive: () => runtime.alive(),
          close: () => runtime.close(),
        };
      },
    });
    stops.push(() => daemon.stop());
    return daemon;
  }

  /** One client chat request through /v1 (the router picks the node). */
  async function ask(i: number): Promise<void> {
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: DEFAULT_ID,
        messages: [{ role: 'user', content: `client question ${i}` }],
        max_tokens: 12,
      }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }

  test.each(Object.keys(LIARS))(
    'attack: %s — suspended within a few checks, its owner slashed, at most its probation share of clients meanwhile',
    async (name) => {
      const owner = generatePrivateKey();
      const liar = await startLiar(name, LIARS[name]!, owner);
      await until(() => targetOf(liar.nodeId) !== undefined, 60_000);
      const served = async () =>
        (
          await db.db.selectFrom('usage_records').select('node_id').where('user_id', '=', userId).execute()
        ).map((r) => r.node_id.toLowerCase());
      const before = (await served()).length;
      let checks = 0;
      let requests = 0;
      for (let round = 0; targetOf(liar.nodeId) && round < 3 * LIAR_MAX_CHECKS; round++) {
        for (let i = 0; i < REQUESTS_PER_CHECK; i++) await ask(requests++);
        const target = targetOf(liar.nodeId);
        if (!target) break;
        if ((await app.canaries.runOnce(target)).status === 'verified') checks++;
      }
      await app.ctx.ledger.idle();
      const rows = (await served()).slice(before);
      const share = rows.filter((n) => n === liar.nodeId.toLowerCase()).length / Math.max(1, rows.length);
      const standing = await db.db
        .selectFrom('node_trust')
        .selectAll()
        .where('node_id', '=', liar.nodeId.toLowerCase())
        .executeTakeFirst();
      const slash = await db.db
        .selectFrom('slashes')
        .selectAll()
        .where('node_id', '=', liar.nodeId.toLowerCase())
        .executeTakeFirst();
      console.log(
        `arena: liar "${name}" suspended after ${checks} checks, having served ${(share * 100).toFixed(0)} % of ${rows.length} client requests (probation: ${PROBATION_SHARE * 100} % of the model's last ${PROBATION_WINDOW})`,
      );
      expect(standing?.status).toBe('suspended');
      expect(checks).toBeLessThanOrEqual(LIAR_MAX_CHECKS);
      expect(slash).toMatchObject({ owner: privateKeyToAccount(owner).address.toLowerCase() });
      // Probation caps a node's share of the model's last PROBATION_WINDOW requests.
      const taken = rows.filter((n) => n === liar.nodeId.toLowerCase()).length;
      expect(taken).toBeLessThanOrEqual(Math.ceil(PROBATION_SHARE * PROBATION_WINDOW));
      // Its clients since the evidence rose are refunded what they paid for its jobs, exactly.
      const billed = await db.db
        .selectFrom('usage_records')
        .select(['id', 'cost_nano'])
        .where('node_id', 'in', [liar.nodeId, liar.nodeId.toLowerCase()])
        .where('user_id', '=', userId)
        .where('created_at', '>=', Number(standing!.window_start))
        .execute();
      const refunds =
        billed.length === 0
          ? []
          : await db.db
              .selectFrom('ledger_entries')
              .select('amount')
              .where('account_id', '=', userId)
              .where('kind', '=', 'conviction_refund')
              .where(
                'ref',
                'in',
                billed.map((b) => `${b.id}:to`),
              )
              .execute();
      const total = (xs: unknown[]) => xs.reduce<bigint>((sum, x) => sum + BigInt(String(x)), 0n);
      console.log(
        `arena: liar "${name}": ${billed.length} client jobs in its evidence window, ${refunds.length} refunded`,
      );
      expect(refunds).toHaveLength(billed.length);
      expect(total(refunds.map((r) => r.amount))).toBe(total(billed.map((b) => b.cost_nano)));
      await until(() => targetOf(liar.nodeId) === undefined, 10_000);
    },
    180_000,
  );
});
