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
import { CONVICTION_THRESHOLD } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import { getLlama, type LlamaModel, type Token } from 'node-llama-cpp';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { applyEntry } from '../coordinator/src/ledger/apply-entry.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID } from '../coordinator/src/ledger/tables.js';
import {
  expectBooksBalanced,
  signIn,
  type TestDatabase,
  testBackends,
  until,
} from '../coordinator/src/testing/index.js';
import type { CanaryOutcome } from '../coordinator/src/trust/canary-runner.js';
import { startLocalVerifier } from '../coordinator/src/trust/local-verifier.js';
import type { CanaryJob } from '../coordinator/src/trust/make-canary.js';

const ARENA_CHECKS = Number(process.env.GPUMESH_ARENA_CHECKS ?? 2_000);
const LIAR_MAX_CHECKS = 4;
const PROBATION_SHARE = 0.2;
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
const USD = 1_000_000_000n;
const DEFAULT_ID = 'arena/default';
const SHARP_ID = 'arena/sharp';

/** A seeded PRNG (mulberry32): the arena's jobs are the same every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'time person year way day thing man world life hand part child eye woman place work week case point ' +
  'government company number group problem fact river garden music window letter story engine market ' +
  'bright quiet early simple strong young small large green happy careful heavy open modern ancient'
).split(' ');

/** Every sampling setting a client can ask for, cycled over the checks. */
const SETTINGS: Record<string, unknown>[] = [
  {},
  { top_p: 0.9 },
  { presence_penalty: 0.5, frequency_penalty: 0.5 },
  { stop: ['. ', '\n'] },
  {
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'x',
        schema: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] },
      },
    },
  },
  {
    tools: [
      {
        type: 'function',
        function: {
          name: 'lookup',
          parameters: { type: 'object', properties: { q: { type: 'boolean' } }, required: ['q'] },
        },
      },
    ],
    tool_choice: 'required',
  },
];
const TEMPERATURES = [0, 0.7, 1, 1.5];

/** The i-th arena job for `model`: its setting, temperature, kind and streaming cycle independently. */
function arenaJob(model: string, i: number, random: () => number): CanaryJob {
  const words = Array.from(
    { length: 4 + Math.floor(random() * 12) },
    () => WORDS[Math.floor(random() * WORDS.length)],
  );
  const text = `${words.join(' ')} ${i}`;
  const setting = SETTINGS[i % SETTINGS.length]!;
  const temperature = TEMPERATURES[Math.floor(i / SETTINGS.length) % TEMPERATURES.length]!;
  const chatOnly = 'tools' in setting || 'response_format' in setting;
  const kind = chatOnly || i % 3 !== 0 ? 'chat' : 'completion';
  const request: Record<string, unknown> = {
    model,
    // A grammar's output must be allowed to finish (a cut one is refused, issue 30).
    max_tokens: chatOnly ? 160 : 16 + Math.floor(random() * 16),
    seed: i,
    temperature,
    ...setting,
  };
  if (kind === 'chat') request.messages = [{ role: 'user', content: text }];
  else request.prompt = text;
  return { kind, stream: !chatOnly && i % 2 === 0, request };
}

describe('trust arena: honest nodes at every setting, and every liar', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumesh-arena-'));
  let db: TestDatabase;
  let app: FastifyInstance;
  let base = '';
  let shaDefault = '';
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
    shaDefault = sha(defaultFile);
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
    const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
    const auth = { authorization: `Bearer ${jwt}` };
    userId = ((await app.inject({ url: '/api/user', headers: auth })).json() as { id: string }).id;
    await credit(db.db, { userId, amountNano: 10n * USD, ref: 'arena-client' });
    apiKey = (
      (
        await app.inject({
          method: 'POST',
          url: '/api/router/keys',
          headers: auth,
          payload: { name: 'arena' },
        })
      ).json() as { key: string }
    ).key;
  }, 180_000);

  afterAll(async () => {
    for (const stop of stops) await stop().catch(() => {});
    for (const d of Object.values(honest)) await d.stop();
    if (app) {
      await app.ctx.ledger.idle();
      await expectBooksBalanced(app.ctx);
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
});
