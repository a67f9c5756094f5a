/**
 * Trust against a cheaper quantization (issue 40 point 7), on real parts: the coordinator (SQLite)
 * verifying with its own verifier, which holds gpumesh/mini-chat's F16, Q8_0 and Q4_0 files as the
 * catalog pins them, and the node daemon in process on node-llama-cpp (CPU). A node serving the
 * Q4_0 file behind the F16 claim is convicted by the Q4_0 substitution statistic
 * (trust/checks/substitution-ratio.ts) within LIAR_MAX_CHECKS default-mix canaries, where today's
 * statistic alone stays under its threshold; honest nodes serving each file under its own claim
 * are checked with every sampling setting a client can ask for and default-mix canaries, and none
 * is suspended or comes near any statistic's threshold. Seeded (the canaries, and each job's
 * sampling seed).
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LlamaDaemon, startLlamaDaemon } from '@gpumesh/node/testing';
import { accumulate, CONVICTION_THRESHOLD } from '@gpumesh/protocol/internal';
import type { FastifyInstance } from 'fastify';
import { getLlama } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../coordinator/src/app.js';
import { loadCatalog } from '../coordinator/src/catalog/catalog.js';
import { loadConfig } from '../coordinator/src/config.js';
import { DEFAULT_ROUTER_MAX_TOKENS_CAP } from '../coordinator/src/config-schema.js';
import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID } from '../coordinator/src/db/tables/ledger.js';
import { applyEntry } from '../coordinator/src/ledger/apply-entry.js';
import { type TestDatabase, testBackends, until } from '../coordinator/src/testing/index.js';
import { type Canary, makeCanary } from '../coordinator/src/trust/canaries/make-canary.js';
import { TrafficShapes } from '../coordinator/src/trust/canaries/traffic-shapes.js';
import type { CanaryOutcome } from '../coordinator/src/trust/checks/canary-runner.js';
import { startLocalVerifier } from '../coordinator/src/trust/checks/local-verifier.js';
import { thresholdOf } from '../coordinator/src/trust/standing/statistics-threshold.js';
import { arenaJob, seeded } from './support/arena-jobs.js';
import { USD } from './support/expected-charge.js';

const MODEL = 'gpumesh/mini-chat';
const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../models/mini-chat');
/**
 * Measured offline (bench/RESULTS.md, session 19–21): at the default mix the Q4_0 liar is convicted
 * in 10 checks at the median, P(within 20) = 95 %, P(within 50) = 100 %.
 */
const LIAR_MAX_CHECKS = 40;
/**
 * Checks of each honest node: enough to catch a rule that drifts toward convicting honest files
 * (each statistic must stay under half its threshold); the false-positive rate itself is measured
 * over thousands of checks by bench/substitution.ts (bench/RESULTS.md), not here.
 */
const HONEST_CHECKS = Number(process.env.GPUMESH_SUBSTITUTION_HONEST_CHECKS ?? 30);
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

/** The catalog's pinned files of mini-chat, by quant, as they lie in models/mini-chat. */
function pinned(): Record<string, { file: string; sha256: string }> {
  const entry = loadCatalog().models.find((m) => m.id === MODEL)!;
  return Object.fromEntries(
    entry.files.map((f) => [f.quant, { file: path.join(MODELS_DIR, f.file), sha256: f.sha256! }]),
  );
}

/** Default-mix canaries (make-canary.ts, no recorded traffic), each with its own sampling seed. */
function defaultMix(seed: number): () => Canary {
  const random = seeded(seed);
  const shapes = new TrafficShapes();
  let i = 0;
  return () => {
    const canary = makeCanary(shapes, MODEL, random, { defaultMaxTokens: DEFAULT_ROUTER_MAX_TOKENS_CAP });
    canary.request.seed = seed * 1_000 + i++;
    return canary;
  };
}

describe('trust: a cheaper quantization behind the claim', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumesh-substitution-'));
  const files = pinned();
  const llamaPromise = getLlama({ gpu: false });
  const daemons: LlamaDaemon[] = [];
  let db: TestDatabase;
  let app: FastifyInstance;
  let verifier: Awaited<ReturnType<typeof startLocalVerifier>> | undefined;

  /** A folder holding the named files (name → source). */
  function folder(name: string, contents: Record<string, string>): string {
    const d = path.join(dir, name);
    mkdirSync(d, { recursive: true });
    for (const [file, source] of Object.entries(contents)) copyFileSync(source, path.join(d, file));
    return d;
  }

  const targetOf = (nodeId: string) => app.canaries.targets().find((t) => t.node.nodeId === nodeId);
  const standingOf = (nodeId: string) =>
    db.db.selectFrom('node_trust').selectAll().where('node_id', '=', nodeId.toLowerCase()).executeTakeFirst();

  async function start(options: Parameters<typeof startLlamaDaemon>[0]): Promise<LlamaDaemon> {
    const daemon = await startLlamaDaemon(options);
    daemons.push(daemon);
    await until(() => targetOf(daemon.nodeId) !== undefined, 60_000);
    return daemon;
  }

  beforeAll(async () => {
    db = await sqlite.open('substitution');
    const config = loadConfig({
      overrides: {
        dataDir: db.dataDir,
        logLevel: 'silent',
        rateLimit: { enabled: false },
        trust: { canaryIntervalMs: 0, spotCheckRate: 0, secondOpinionRate: 0, reputationIntervalMs: 0 },
      },
    });
    app = await buildApp({ config, store: db.store, logger: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    verifier = await startLocalVerifier({
      modelsDir: folder('verifier-models', {
        'f16.gguf': files.F16!.file,
        'q8.gguf': files.Q8_0!.file,
        'q4.gguf': files.Q4_0!.file,
      }),
      stateDir: path.join(dir, 'verifier-state'),
    });
    app.canaries.setLocalVerifier(verifier);
    await applyEntry(db.db, {
      accountId: PLATFORM_ACCOUNT_ID,
      kind: ENTRY_KINDS.adjustment,
      amount: 10n * USD,
      ref: 'substitution-seed',
      now: Date.now(),
    });
  }, 180_000);

  afterAll(async () => {
    for (const d of daemons) await d.stop().catch(() => {});
    await app?.close();
    await verifier?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = () => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  test(`attack: the Q4_0 file behind the F16 claim — convicted by the Q4_0 statistic within ${LIAR_MAX_CHECKS} default-mix canaries, today's alone would not`, async () => {
    const liar = await start({
      coordinator: base(),
      modelsDir: folder('liar', { 'claimed.gguf': files.F16!.file, 'served.gguf': files.Q4_0!.file }),
      llama: await llamaPromise,
      wrap: (runtime) => ({
        ...runtime,
        load: (p) => runtime.load(p),
        models: () => runtime.models().filter((m) => m.id === 'claimed'),
        run: (job) => runtime.run({ ...job, model: 'served', request: { ...job.request, model: 'served' } }),
        alive: () => runtime.alive(),
        close: () => runtime.close(),
      }),
    });
    expect(targetOf(liar.nodeId)?.offer.sha256).toBe(files.F16!.sha256);
    const next = defaultMix(40);
    const outcomes: CanaryOutcome[] = [];
    for (let i = 0; i < LIAR_MAX_CHECKS + 10 && targetOf(liar.nodeId); i++) {
      const outcome = await app.canaries.runOnce(targetOf(liar.nodeId)!, { job: next() });
      if (outcome.status === 'verified') outcomes.push(outcome);
      if (outcome.status === 'verified' && outcome.standing.status === 'suspended') break;
    }
    const judgements = outcomes.flatMap((o) => (o.status === 'verified' ? [o.judgement] : []));
    // Today's statistic alone, at its own threshold T: the CUSUM it would have kept.
    let today = 0;
    let todayHighest = 0;
    for (const j of judgements) {
      today = accumulate(today, j.logE);
      todayHighest = Math.max(todayHighest, today);
    }
    const q4 = judgements.map((j) => j.substitution?.Q4_0 ?? 0);
    const standing = await standingOf(liar.nodeId);
    console.log(
      `substitution: Q4_0 for F16 suspended after ${judgements.length} checks (${judgements.reduce((s, j) => s + j.tokens, 0)} tokens); ` +
        `ln q/p a check, Q4_0: mean ${(q4.reduce((s, x) => s + x, 0) / Math.max(1, q4.length)).toFixed(2)}; ` +
        `today's statistic alone: highest ${todayHighest.toFixed(1)} of ${CONVICTION_THRESHOLD.toFixed(1)} nats`,
    );
    expect(standing?.status).toBe('suspended');
    expect(judgements.length).toBeLessThanOrEqual(LIAR_MAX_CHECKS);
    expect(standing?.reason).toMatch(/sampled from its cheaper Q4_0 file, not those weights/);
    expect(todayHighest).toBeLessThan(CONVICTION_THRESHOLD);
    expect(judgements.every((j) => j.failure === undefined)).toBe(true);
    await until(() => targetOf(liar.nodeId) === undefined, 10_000);
  }, 600_000);

  test(`behavior: honest nodes serving F16, Q8_0 and Q4_0 under their own claims, ${HONEST_CHECKS} checks each at every setting: none suspended`, async () => {
    const honest = {
      F16: await start({
        coordinator: base(),
        modelsDir: folder('honest-f16', { 'm.gguf': files.F16!.file }),
      }),
      Q8_0: await start({
        coordinator: base(),
        modelsDir: folder('honest-q8', { 'm.gguf': files.Q8_0!.file }),
      }),
      Q4_0: await start({
        coordinator: base(),
        modelsDir: folder('honest-q4', { 'm.gguf': files.Q4_0!.file }),
      }),
    };
    const k = { F16: 3, Q8_0: 2, Q4_0: 1 };
    for (const [n, [quant, daemon]] of Object.entries(honest).entries()) {
      const random = seeded(2_000 + n);
      const next = defaultMix(3_000 + n);
      const outcomes: CanaryOutcome[] = [];
      // The highest running evidence of each statistic (today's, then one per quant).
      const highest = new Map<string, number>();
      for (let i = 0; i < HONEST_CHECKS; i++) {
        // The arena's jobs (every sampling setting) alternating with default-mix canaries.
        const job = i % 2 === 0 ? arenaJob(MODEL, i, random) : next();
        if (i % 2 === 0) job.request.seed = 5_000 * (n + 1) + i;
        const target = targetOf(daemon.nodeId);
        expect(target, `${quant} is still connected`).toBeDefined();
        outcomes.push(await app.canaries.runOnce(target!, { job }));
        const row = await standingOf(daemon.nodeId);
        const now: Record<string, number> = {
          today: Number(row?.evidence_e4 ?? 0),
          ...(JSON.parse(row?.substitution_e4 ?? '{}') as Record<string, number>),
        };
        for (const [name, e4] of Object.entries(now)) {
          highest.set(name, Math.max(highest.get(name) ?? 0, e4 / 10_000));
        }
      }
      const verified = outcomes.flatMap((o) => (o.status === 'verified' ? [o.judgement] : []));
      const standing = await standingOf(daemon.nodeId);
      const quants = new Set(verified.flatMap((j) => Object.keys(j.substitution ?? {})));
      const statistics = 1 + quants.size;
      console.log(
        `substitution: honest ${quant}: ${verified.length} of ${HONEST_CHECKS} checks verified (${verified.filter((j) => j.scored).length} scored), k = ${statistics}, ` +
          `highest running evidence ${[...highest].map(([name, x]) => `${name} ${x.toFixed(2)}`).join(', ')} of ${thresholdOf(statistics).toFixed(1)} nats`,
      );
      expect(verified.length).toBeGreaterThanOrEqual(HONEST_CHECKS * 0.9);
      expect(statistics).toBe(k[quant as keyof typeof k]);
      expect(verified.map((j) => j.failure).filter(Boolean)).toEqual([]);
      expect(standing?.status).not.toBe('suspended');
      expect(Math.max(...highest.values())).toBeLessThan(thresholdOf(statistics) / 2);
    }
  }, 900_000);
});
