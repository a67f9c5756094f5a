/**
 * What the substitution statistics cost the verifier (issue 40 point 7): for default-mix canaries
 * of gpumesh/mini-chat generated on its F16 file, the verify work of a check as a ratio of today's
 * (one teacher-forced pass on the claimed file), measured in the same run on the same completions —
 * with the proposed statistics the coordinator's verifier also teacher-forces the ids on each
 * cheaper pinned file (Q8_0 and Q4_0 for an F16 claim), and, when a network node scored the claim,
 * on the claimed file itself (trust/checks/substitution-ratio.ts). Beside it, each as a share of the
 * canary's generation. The files: those the catalog pins, from models/mini-chat.
 *
 *   node --conditions=gpumesh-source --import tsx bench/substitution-cost.ts [--rounds 40]
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_ROUTER_MAX_TOKENS_CAP } from '../coordinator/src/config-schema.js';
import { makeCanary } from '../coordinator/src/trust/canaries/make-canary.js';
import { TrafficShapes } from '../coordinator/src/trust/canaries/traffic-shapes.js';
import { samplingOf } from '../coordinator/src/trust/checks/sampling-of.js';
import { seeded } from '../test/support/arena-jobs.js';
import { loadCpuRuntime } from './substitution-check.js';
import { pinnedFiles } from './substitution-files.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '40' } } });
const ROUNDS = Number(values.rounds);
const MODEL = 'gpumesh/mini-chat';
const pinned = pinnedFiles(
  path.join(ROOT, 'coordinator/src/catalog/models.json'),
  MODEL,
  path.join(ROOT, 'models/mini-chat'),
);
const dir = mkdtempSync(path.join(tmpdir(), 'gm-bench-substitution-cost-'));
try {
  const modelsDir = path.join(dir, 'models');
  mkdirSync(modelsDir);
  for (const quant of ['F16', 'Q8_0', 'Q4_0']) {
    copyFileSync(pinned[quant]!.path, path.join(modelsDir, `${quant}.gguf`));
  }
  const runtime = await loadCpuRuntime(modelsDir, path.join(dir, 'state'));
  const idOf = (quant: string) => runtime.models().find((m) => m.sha256 === pinned[quant]!.sha256)!.id;
  const random = seeded(21);
  const shapes = new TrafficShapes();
  const sums = { generate: 0, F16: 0, Q8_0: 0, Q4_0: 0 };
  let tokens = 0;
  let done = 0;
  for (let round = 0; done < ROUNDS + 2 && round < 3 * ROUNDS; round++) {
    const canary = makeCanary(shapes, MODEL, random, { defaultMaxTokens: DEFAULT_ROUTER_MAX_TOKENS_CAP });
    let ids: { prompt: number[]; completion: number[] } | undefined;
    const g0 = performance.now();
    // A canary the runtime refuses (a prompt over its context) has nothing to verify.
    const answered = await runtime
      .run({
        kind: canary.kind,
        model: idOf('F16'),
        request: { ...canary.request, model: idOf('F16'), seed: round },
        stream: false,
        onTokenIds: (t) => {
          ids = t;
        },
      })
      .catch(() => undefined);
    const generate = performance.now() - g0;
    if (!answered || !ids || ids.completion.length === 0) continue;
    const request = {
      promptTokenIds: ids.prompt,
      completionTokenIds: ids.completion,
      topK: 8,
      sampling: samplingOf(canary.request),
    };
    const times: Record<string, number> = {};
    for (const quant of ['F16', 'Q8_0', 'Q4_0'] as const) {
      const t0 = performance.now();
      await runtime.run({
        kind: 'verify',
        model: idOf(quant),
        request: { ...request, sha256: pinned[quant]!.sha256 },
        stream: false,
      });
      times[quant] = performance.now() - t0;
    }
    if (done++ < 2) continue; // warm-up
    sums.generate += generate;
    for (const quant of ['F16', 'Q8_0', 'Q4_0'] as const) sums[quant] += times[quant]!;
    tokens += ids.completion.length;
  }
  const today = sums.F16;
  const local = sums.F16 + sums.Q8_0 + sums.Q4_0;
  const network = sums.F16 + local;
  console.log(
    `substitution cost, ${MODEL} F16 claim, ${ROUNDS} default-mix canaries (${Math.round(tokens / ROUNDS)} completion tokens each): ` +
      `verify work with the substitution statistics / today's: ${(local / today).toFixed(2)} when the coordinator's verifier scored the claim, ` +
      `${(network / today).toFixed(2)} when a network node did (the claimed file is run again here); ` +
      `as a share of the canary's generation: today's ${(today / sums.generate).toFixed(3)}, proposed ${(local / sums.generate).toFixed(3)} / ${(network / sums.generate).toFixed(3)}; ` +
      `per pass: F16 ${(sums.F16 / ROUNDS).toFixed(1)} ms, Q8_0 ${(sums.Q8_0 / ROUNDS).toFixed(1)} ms, Q4_0 ${(sums.Q4_0 / ROUNDS).toFixed(1)} ms`,
  );
  await runtime.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
