/**
 * The runs of the substitution study (bench/substitution.ts): a liar checked until the current
 * statistic convicts it (or `maxChecks`), and an honest node checked `checks` times; each run's
 * result is cached by the sha256 of the files, the job source and the seed, so re-running the
 * command on the same files reuses it, and a run cut short resumes where its last chunk ended.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_ROUTER_MAX_TOKENS_CAP } from '../coordinator/src/config-schema.js';
import { type Canary, makeCanary } from '../coordinator/src/trust/canaries/make-canary.js';
import { TrafficShapes } from '../coordinator/src/trust/canaries/traffic-shapes.js';
import { arenaJob, seeded } from '../test/support/arena-jobs.js';
import type { Bench } from './substitution-check.js';
import { type CheckEvidence, convictedAt, proposedConvictedAt } from './substitution-evidence.js';

/** How a run's jobs are made: the coordinator's default-mix canaries, at their own or a set temperature. */
export type Setting = { name: string; temperature?: number };
export const SETTINGS: Setting[] = [
  { name: 'default' },
  { name: 'T 0', temperature: 0 },
  { name: 'T 0.7', temperature: 0.7 },
  { name: 'T 1.5', temperature: 1.5 },
];

/** One verified check: its statistics (substitution-evidence.ts), tokens, whether the statistic scored it. */
export type Checked = CheckEvidence & { tokens: number; scored: boolean; failure?: string };

export type Run = { checks: Checked[]; empty: number; skipped: string[] };

/** What a run needs: the bench, the files by sha256, where results are cached. */
export type RunContext = {
  bench: Bench;
  cacheDir: string;
  model: string;
  seed: number;
  /** Report what is cached only (no check is run): the tables of runs made before. */
  cachedOnly?: boolean;
};

/** The canaries of a setting, the same sequence for every liar (seeded by setting and seed). */
export function canaries(model: string, setting: Setting, seed: number): () => Canary {
  const random = seeded(seed * 7919 + SETTINGS.indexOf(setting));
  const shapes = new TrafficShapes();
  // What the router sets when a client names no max_tokens: min(its cap, the model's context).
  const defaultMaxTokens = Math.min(DEFAULT_ROUTER_MAX_TOKENS_CAP, 8192);
  return () => {
    const canary = makeCanary(shapes, model, random, { defaultMaxTokens });
    if (setting.temperature !== undefined) canary.request.temperature = setting.temperature;
    return canary;
  };
}

const cacheFile = (ctx: RunContext, key: string) =>
  path.join(ctx.cacheDir, `${key.replace(/[^\w.-]+/g, '_')}.json`);

/** A cached run (`.json`), or with `.partial` the checks of a chunk cut short. */
function cachedValue<T>(ctx: RunContext, key: string, extension = '.json'): T | undefined {
  const file = cacheFile(ctx, key).replace(/\.json$/, extension);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : undefined;
}

function cached<T>(ctx: RunContext, key: string, make: () => Promise<T>): Promise<T> {
  const file = cacheFile(ctx, key);
  const value = cachedValue<T>(ctx, key);
  if (value !== undefined) return Promise.resolve(value);
  return make().then((value) => {
    mkdirSync(ctx.cacheDir, { recursive: true });
    writeFileSync(file, JSON.stringify(value));
    return value;
  });
}

async function checkOne(
  ctx: RunContext,
  run: Run,
  canary: Canary,
  files: { served: string; claimed: string; cheaper: readonly string[] },
): Promise<Checked | undefined> {
  const r = await ctx.bench.check(canary, files.served, files.claimed, files.cheaper);
  if (r.status === 'empty') run.empty++;
  if (r.status === 'skipped') run.skipped.push(r.reason);
  if (r.status !== 'verified') return undefined;
  const j = r.judgement;
  const checked: Checked = { logE: j.logE, ratios: r.ratios, tokens: r.tokens, scored: j.scored };
  if (j.failure) checked.failure = j.failure;
  run.checks.push(checked);
  return checked;
}

/**
 * A liar under `setting`: checks until both statistics have convicted it, or `maxChecks` verified
 * checks (the curve is drawn from these).
 */
export function liarRun(
  ctx: RunContext,
  setting: Setting,
  files: { served: string; claimed: string; cheaper: readonly string[] },
  maxChecks: number,
): Promise<Run | undefined> {
  const key = `liar-${files.served.slice(0, 12)}-as-${files.claimed.slice(0, 12)}-${setting.name}-s${ctx.seed}-n${maxChecks}`;
  if (ctx.cachedOnly) return Promise.resolve(cachedValue<Run>(ctx, key));
  return cached(ctx, key, async () => {
    const next = canaries(ctx.model, setting, ctx.seed);
    const run: Run = { checks: [], empty: 0, skipped: [] };
    for (let attempts = 0; run.checks.length < maxChecks && attempts < 3 * maxChecks; attempts++) {
      const c = await checkOne(ctx, run, next(), files);
      if (c && convictedAt(run.checks) > 0 && proposedConvictedAt(run.checks) > 0) break;
    }
    return run;
  });
}

/** Chunks an honest run is cached in (a long run cut short resumes). */
const CHUNK = 500;

/**
 * An honest node: `checks` checks of the weights it claims, alternating the arena's jobs (every
 * sampling setting: temperatures 0/0.7/1/1.5 × plain, top_p, penalties, stop strings, JSON schema,
 * forced tool call) and the coordinator's default-mix canaries.
 */
export async function honestRun(
  ctx: RunContext,
  files: { served: string; claimed: string; cheaper: readonly string[] },
  checks: number,
  onChunk: (done: number) => void,
): Promise<Run> {
  const total: Run = { checks: [], empty: 0, skipped: [] };
  const chunk = Math.min(CHUNK, checks);
  for (let start = 0; start < checks; start += chunk) {
    const key = `honest-${files.served.slice(0, 12)}-s${ctx.seed}-c${start}-${chunk}`;
    const part = ctx.cachedOnly
      ? (cachedValue<Run>(ctx, key) ?? cachedValue<Run>(ctx, key, '.partial'))
      : await cached(ctx, key, () => honestChunk(ctx, files, start, chunk, key));
    if (!part) break;
    total.checks.push(...part.checks);
    total.empty += part.empty;
    total.skipped.push(...part.skipped);
    onChunk(Math.min(checks, start + chunk));
    if (ctx.cachedOnly && 'next' in part) break; // a chunk cut short: the run ends there
  }
  return total;
}

/** Checks start … start + size − 1 of an honest run, saved every PROGRESS_EVERY checks so a cut run resumes. */
async function honestChunk(
  ctx: RunContext,
  files: { served: string; claimed: string; cheaper: readonly string[] },
  start: number,
  size: number,
  key: string,
): Promise<Run> {
  const progress = path.join(ctx.cacheDir, `${key.replace(/[^\w.-]+/g, '_')}.partial`);
  const saved = existsSync(progress)
    ? (JSON.parse(readFileSync(progress, 'utf8')) as Run & { next: number })
    : undefined;
  const run: Run = saved ? { checks: saved.checks, empty: saved.empty, skipped: saved.skipped } : emptyRun();
  const random = seeded(ctx.seed * 104_729 + start);
  const next = canaries(ctx.model, SETTINGS[0]!, ctx.seed * 31 + start);
  for (let i = start; i < start + size; i++) {
    // Jobs are drawn in order even when already checked, so a resumed run checks the same jobs.
    const canary = i % 2 === 0 ? arenaJob(ctx.model, i >> 1, random) : next();
    if (saved && i < saved.next) continue;
    await checkOne(ctx, run, canary, files);
    if ((i + 1 - start) % PROGRESS_EVERY === 0) {
      mkdirSync(ctx.cacheDir, { recursive: true });
      writeFileSync(progress, JSON.stringify({ ...run, next: i + 1 }));
    }
  }
  rmSync(progress, { force: true });
  return run;
}

const PROGRESS_EVERY = 25;
const emptyRun = (): Run => ({ checks: [], empty: 0, skipped: [] });
