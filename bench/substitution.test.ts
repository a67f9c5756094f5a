/**
 * The substitution study's check, small (bench/substitution.ts): gpumesh/mini-chat's pinned files on
 * the daemon's own runtime, checked as the coordinator checks (generate, precheck, teacher-force,
 * judge). A node serving the Q4_0 file behind the F16 file's claim is convicted by the proposed
 * statistic (the likelihood ratio against the pinned Q4_0 file beside today's e-value) within
 * MAX_CHECKS default-mix canaries at temperature 0.7; an honest node serving Q4_0 under its own
 * claim, checked HONEST_CHECKS times with F16 as the other file, stays below half the threshold.
 * The jobs are seeded; the sampling is not (a canary names a seed only as clients do), so the
 * check that convicts varies a little from run to run.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONVICTION_THRESHOLD } from '@gpumesh/protocol/internal';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Bench, startBench } from './substitution-check.js';
import { type CheckEvidence, honestRuns, proposedConvictedAt } from './substitution-evidence.js';
import { type PinnedFile, pinnedFiles } from './substitution-files.js';
import { canaries, SETTINGS } from './substitution-runs.js';

/** The study convicts it at check 11 at T 0.7 (bench/RESULTS.md, these jobs; 16–20 on the v1 files); a bound. */
const MAX_CHECKS = 40;
/** Honest checks (the study's 10,000-check runs are in bench/RESULTS.md; this is their small version). */
const HONEST_CHECKS = 20;
const ROOT = path.join(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(tmpdir(), 'gpumesh-substitution-'));
let bench: Bench;
let files: Record<string, PinnedFile>;

beforeAll(async () => {
  files = pinnedFiles(
    path.join(ROOT, 'coordinator/src/catalog/models.json'),
    'gpumesh/mini-chat',
    path.join(ROOT, 'models/mini-chat'),
  );
  mkdirSync(path.join(dir, 'models'));
  for (const quant of ['F16', 'Q4_0']) {
    copyFileSync(files[quant]!.path, path.join(dir, 'models', `${quant}.gguf`));
  }
  bench = await startBench(path.join(dir, 'models'), path.join(dir, 'state'));
});

afterAll(async () => {
  await bench?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Checks of `served` claimed as `claimed` until `stop` says so or `most`; each check's evidence. A
 * canary whose prompt does not fit the context is skipped, as the coordinator skips it.
 */
async function checks(
  served: string,
  claimed: string,
  cheaper: string[],
  most: number,
  stop: (run: CheckEvidence[]) => boolean,
): Promise<CheckEvidence[]> {
  const next = canaries('gpumesh/mini-chat', SETTINGS.find((s) => s.name === 'T 0.7')!, 1);
  const run: CheckEvidence[] = [];
  let skipped = 0;
  while (run.length < most && !stop(run)) {
    const r = await bench.check(next(), served, claimed, cheaper);
    if (r.status === 'skipped') skipped++;
    if (r.status === 'verified') run.push({ logE: r.judgement.logE, ratios: r.ratios });
  }
  expect(skipped).toBeLessThanOrEqual(2);
  return run;
}

test('attack: Q4_0 served behind the F16 claim is convicted by the proposed check within 40 checks', async () => {
  const { F16, Q4_0 } = files as { F16: PinnedFile; Q4_0: PinnedFile };
  const run = await checks(
    Q4_0.sha256,
    F16.sha256,
    [Q4_0.sha256],
    MAX_CHECKS,
    (r) => proposedConvictedAt(r) > 0,
  );
  const at = proposedConvictedAt(run);
  console.log(`substitution: Q4_0 for F16 convicted by the proposed check at check ${at} (T 0.7)`);
  expect(at).toBeGreaterThan(1);
  expect(at).toBeLessThanOrEqual(MAX_CHECKS);
}, 300_000);

test(`behavior: honest Q4_0 under its own claim stays below half the threshold in ${HONEST_CHECKS} checks`, async () => {
  const { Q4_0 } = files as { Q4_0: PinnedFile };
  // Against F16's tokens under a Q4_0 claim the ratio would be the liar's; here the honest Q4_0 is
  // scored against the claim alone (no cheaper pinned file), and against F16 as a stand-in cheaper one.
  const run = await checks(Q4_0.sha256, Q4_0.sha256, [files.F16!.sha256], HONEST_CHECKS, () => false);
  const { proposed, current } = honestRuns(run);
  expect(run).toHaveLength(HONEST_CHECKS);
  expect(current.convictions + proposed.convictions).toBe(0);
  expect(proposed.highest).toBeLessThan(CONVICTION_THRESHOLD / 2);
}, 300_000);
