/**
 * Trust against realistic substitutes (issue 40, point 7): how many checks, and tokens, the
 * coordinator's verifier needs to convict a node that serves something cheaper than the weights it
 * claims — the same weights at Q8_0 or Q4_0, the weights plus small noise, an earlier checkpoint, a
 * smaller model trained on the same data, a second run of the recipe with another seed — at the
 * coordinator's default-mix canaries and at temperatures 0, 0.7 and 1.5; and how often honest nodes
 * serving each pinned file under its own claim are convicted. Every check is made as the coordinator
 * makes it (bench/substitution-check.ts: the daemon's runtime generates and verifies, trust/judge.ts
 * judges), with two statistics side by side: today's, and the proposed one
 * (bench/substitution-evidence.ts). Seeded; results are cached by file hash, so one command
 * against whatever the catalog pins gives the table.
 *
 *   node --conditions=gpumesh-source --import tsx bench/substitution.ts \
 *     [--checkpoint F.gguf] [--small F.gguf] [--other-seed F.gguf] [--honest-checks 10000] \
 *     [--max-checks 60] [--part all|liars|honest-F16|honest-Q8_0|honest-Q4_0] [--work DIR] [--cache DIR]
 *     [--out F.json]
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CONVICTION_THRESHOLD } from '@gpumesh/protocol/internal';
import { seeded } from '../test/support/arena-jobs.js';
import { startBench } from './substitution-check.js';
import {
  type CheckEvidence,
  convictedAt,
  convictionCurve,
  honestRuns,
  proposedConvictedAt,
} from './substitution-evidence.js';
import { pinnedFiles, sha256Of, writeNoisyCopy } from './substitution-files.js';
import { honestTable, liarTable } from './substitution-report.js';
import { honestRun, liarRun, type Run, type RunContext, SETTINGS } from './substitution-runs.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'gpumesh/mini-chat' },
    catalog: { type: 'string', default: path.join(ROOT, 'coordinator/src/catalog/models.json') },
    dir: { type: 'string', default: path.join(ROOT, 'models/mini-chat') },
    checkpoint: { type: 'string' },
    'checkpoint-label': { type: 'string', default: 'an earlier checkpoint' },
    small: { type: 'string' },
    'small-label': { type: 'string', default: 'a smaller model, same data' },
    'other-seed': { type: 'string' },
    noise: { type: 'string', default: '0.01' },
    'honest-checks': { type: 'string', default: '10000' },
    'max-checks': { type: 'string', default: '60' },
    part: { type: 'string', default: 'all' },
    /** Liars to run, by slug: q8,q4,noise,checkpoint,small,other-seed (all by default). */
    only: { type: 'string' },
    /** Job settings to run, by name: "default,T 0,T 0.7,T 1.5" (all by default). */
    settings: { type: 'string' },
    /** Print the tables of the runs cached before, running no check. */
    'cached-only': { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    work: { type: 'string', default: path.join(ROOT, '.bench/substitution') },
    cache: { type: 'string' },
    out: { type: 'string' },
  },
});
const seed = Number(values.seed);
const part = values.part!;
const pinned = pinnedFiles(values.catalog!, values.model!, values.dir!);
const [f16, q8, q4] = ['F16', 'Q8_0', 'Q4_0'].map((q) => {
  const file = pinned[q];
  if (!file) throw new Error(`the catalog pins no ${q} file for ${values.model}`);
  return file;
}) as [
  NonNullable<(typeof pinned)[string]>,
  NonNullable<(typeof pinned)[string]>,
  NonNullable<(typeof pinned)[string]>,
];

// The runtime's models folder: the pinned files, and each liar's weights.
const work = path.resolve(values.work!);
const modelsDir = path.join(work, 'models');
mkdirSync(modelsDir, { recursive: true });
for (const f of [f16, q8, q4]) copyFileSync(f.path, path.join(modelsDir, `pinned-${f.quant}.gguf`));
const noiseShare = Number(values.noise);
const noisy = path.join(modelsDir, 'liar-noise.gguf');
writeNoisyCopy(f16.path, noisy, noiseShare, seed);
type Liar = { slug: string; name: string; sha: string; detail: string };
const liars: Liar[] = [
  { slug: 'q8', name: 'Q8_0 for F16', sha: q8.sha256, detail: 'the pinned Q8_0 file' },
  { slug: 'q4', name: 'Q4_0 for F16', sha: q4.sha256, detail: 'the pinned Q4_0 file' },
  {
    slug: 'noise',
    name: `F16 + ${noiseShare * 100} % noise`,
    sha: sha256Of(noisy),
    detail: `Gaussian noise of ${noiseShare * 100} % of each tensor's RMS on every weight`,
  },
];
const optional: [string, string | undefined, string][] = [
  [values['checkpoint-label']!, values.checkpoint, 'checkpoint'],
  [values['small-label']!, values.small, 'small'],
  ['another seed, same recipe', values['other-seed'], 'other-seed'],
];
const unmeasured: string[] = [];
for (const [name, file, slug] of optional) {
  if (!file) {
    unmeasured.push(name);
    continue;
  }
  const copy = path.join(modelsDir, `liar-${slug}.gguf`);
  copyFileSync(file, copy);
  liars.push({ slug, name, sha: sha256Of(copy), detail: path.basename(file) });
}

const bench = await startBench(modelsDir, path.join(work, 'state'));
const ctx: RunContext = {
  bench,
  cacheDir: path.resolve(values.cache ?? path.join(work, 'cache')),
  model: values.model!,
  seed,
  cachedOnly: values['cached-only']!,
};
const cheaperThan = { F16: [q8.sha256, q4.sha256], Q8_0: [q4.sha256], Q4_0: [] } as Record<string, string[]>;
const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const report: Record<string, unknown> = {
  model: values.model,
  files: Object.fromEntries([f16, q8, q4].map((f) => [f.quant, f.sha256])),
  threshold: CONVICTION_THRESHOLD,
  seed,
};

try {
  if (part === 'all' || part === 'liars') {
    const cells = [];
    const only = values.only?.split(',');
    const chosen = only ? only.flatMap((slug) => liars.filter((l) => l.slug === slug)) : liars;
    for (const liar of chosen) {
      for (const setting of SETTINGS.filter(
        (x) => !values.settings || values.settings.split(',').includes(x.name),
      )) {
        const files = { served: liar.sha, claimed: f16.sha256, cheaper: cheaperThan.F16! };
        const run = await liarRun(ctx, setting, files, Number(values['max-checks']));
        if (!run) continue; // --cached-only, and not run before
        cells.push(liarCell(liar, setting.name, run));
        log(`${liar.name} · ${setting.name}: ${run.checks.length} checks`);
      }
    }
    report.liars = cells;
    report.unmeasured = unmeasured;
    console.log(liarTable(cells, unmeasured));
  }
  const honest = [f16, q8, q4].filter((f) => part === 'all' || part === `honest-${f.quant}`);
  const honestRows = [];
  for (const f of honest) {
    const files = { served: f.sha256, claimed: f.sha256, cheaper: cheaperThan[f.quant]! };
    const run = await honestRun(ctx, files, Number(values['honest-checks']), (done) =>
      log(`honest ${f.quant}: ${done} checks`),
    );
    honestRows.push({ quant: f.quant, ...honestSummary(run) });
  }
  if (honestRows.length > 0) {
    report.honest = honestRows;
    console.log(honestTable(honestRows));
  }
  if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`);
} finally {
  await bench.close();
}

/** Checks and tokens until each statistic convicts, the curve, and the Q4 ratio's nats a token. */
function liarCell(liar: Liar, setting: string, run: Run) {
  const of = (rule: (checks: readonly CheckEvidence[]) => number) => {
    const at = rule(run.checks);
    const tokens = run.checks.slice(0, at || undefined).reduce((s, c) => s + c.tokens, 0);
    const curve = convictionCurve(run.checks, rule, [2, 5, 10, 20, 50, 100, 200], seeded(seed));
    return { convictedAt: at, tokens, curve };
  };
  const scored = run.checks.filter((c) => c.scored);
  const scoredTokens = scored.reduce((s, c) => s + c.tokens, 0);
  // Over the checks q could have drawn (a floored ratio: a token outside q's kept set, e.g. at T 0).
  const perToken = (j: number) => {
    const kept = scored.filter((c) => (c.ratios[j] ?? 0) > -1e5);
    const tokens = kept.reduce((s, c) => s + c.tokens, 0);
    return kept.reduce((s, c) => s + (c.ratios[j] ?? 0), 0) / Math.max(1, tokens);
  };
  return {
    liar: liar.name,
    detail: liar.detail,
    setting,
    checks: run.checks.length,
    tokens: run.checks.reduce((s, c) => s + c.tokens, 0),
    scored: scored.length,
    scoredTokens,
    empty: run.empty,
    skipped: run.skipped.length,
    meanLogE: run.checks.reduce((s, c) => s + c.logE, 0) / Math.max(1, run.checks.length),
    // ln q/p a scored token for the Q8_0 and Q4_0 files: an estimate of KL(liar‖claim) when q is the liar.
    ratioPerToken: [0, 1].map(perToken),
    current: of(convictedAt),
    proposed: of(proposedConvictedAt),
  };
}

/** Convictions (each statistic restarted after one), failures and the worst evidence of an honest run. */
function honestSummary(run: Run) {
  const scored = run.checks.filter((c) => c.scored);
  const { current, proposed } = honestRuns(run.checks);
  return {
    checks: run.checks.length,
    scored: scored.length,
    tokens: run.checks.reduce((s, c) => s + c.tokens, 0),
    empty: run.empty,
    skipped: run.skipped.length,
    failed: run.checks.filter((c) => c.failure).map((c) => c.failure),
    current: {
      ...current,
      worst: Math.max(...scored.map((c) => c.logE)),
      overFivePercent: scored.filter((c) => c.logE >= Math.log(20)).length,
    },
    proposed: {
      ...proposed,
      worst: Math.max(...scored.map((c) => Math.max(c.logE, ...c.ratios))),
      overFivePercent: scored.filter((c) => Math.max(c.logE, ...c.ratios) >= Math.log(20)).length,
    },
  };
}
