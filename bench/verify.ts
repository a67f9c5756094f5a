/**
 * Verification cost: teacher-forcing a completion (protocol `verify` jobs, one batched pass) as a
 * ratio of generating it, measured in the same run on the same model and sequence, for the tiny
 * and medium generated models (outputStd 0.5), with the job's sampling settings as the coordinator
 * sends them (protocol v0.2: every logit is read to describe the processed distribution). Goal
 * (issue 20): ≤ 0.1 — a canary's check must
 * cost a small fraction of the canary. Beside it, the floor: the same tokens evaluated in one batch
 * with nothing read back, which no verification on this model and machine can beat.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/verify.ts [--rounds 30]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type TinyModelOptions, writeTinyModel } from '@gpumesh/node';
import { getLlama, type Token } from 'node-llama-cpp';
import { generateText } from '../node/src/runtimes/llama/generate-text.js';
import { verifyTokens } from '../node/src/runtimes/llama/verify-tokens.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '30' }, threads: { type: 'string', default: '2' } },
});
const ROUNDS = Number(values.rounds);
const VERIFY_THREADS = Number(values.threads);
const MODELS: { id: string; shape: TinyModelOptions; maxTokens: number }[] = [
  { id: 'tiny', shape: { layers: 2, width: 64 }, maxTokens: 256 },
  { id: 'medium', shape: { layers: 6, width: 384, heads: 6, feedForward: 1024 }, maxTokens: 128 },
];

const dir = mkdtempSync(path.join(tmpdir(), 'gm-bench-verify-'));
const llama = await getLlama({ gpu: false });
try {
  for (const spec of MODELS) {
    const { path: modelPath } = await writeTinyModel({
      path: path.join(dir, `${spec.id}.gguf`),
      ...spec.shape,
      outputStd: 0.5,
    });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ threads: 1, contextSize: 1024 });
    // Verification is one batched pass: compute-bound, so it uses the machine's cores (generation
    // is one token at a time, where a second thread only adds synchronisation).
    const verifyContext = await model.createContext({ threads: VERIFY_THREADS, contextSize: 1024 });
    const generator = context.getSequence();
    const verifier = verifyContext.getSequence();
    const ratios: number[] = [];
    const floors: number[] = [];
    let tokens = 0;
    let generateMs = 0;
    let verifyMs = 0;
    for (let round = 0; round < ROUNDS + 2; round++) {
      const promptTokens: Token[] = [model.tokens.bos!, ...model.tokenize(`Once upon a time ${round}`)];
      await generator.clearHistory();
      const g0 = performance.now();
      const { tokenIds } = await generateText({
        sequence: generator,
        promptTokens,
        maxTokens: spec.maxTokens,
        temperature: 1,
        seed: round,
        stop: [],
        tokenBias: undefined,
      });
      const g1 = performance.now();
      // As the coordinator asks since protocol v0.2: the job's sampling settings, every logit read.
      await verifyTokens(verifier, {
        promptTokens,
        completionTokens: tokenIds,
        topK: 8,
        sampling: { temperature: 1 },
      });
      const v1 = performance.now();
      // The floor: the same tokens evaluated in one batch, reading nothing back. No verification
      // on this model and machine can cost less than this.
      await verifier.clearHistory();
      await verifier.evaluateWithoutGeneratingNewTokens([...promptTokens, ...tokenIds]);
      const f1 = performance.now();
      if (round < 2 || tokenIds.length === 0) continue; // warm-up
      ratios.push((v1 - g1) / (g1 - g0));
      floors.push((f1 - v1) / (g1 - g0));
      tokens += tokenIds.length;
      generateMs += g1 - g0;
      verifyMs += v1 - g1;
    }
    ratios.sort((x, y) => x - y);
    floors.sort((x, y) => x - y);
    const median = ratios[ratios.length >> 1]!;
    const floor = floors[floors.length >> 1]!;
    console.log(
      `${spec.id} (verify on ${VERIFY_THREADS} threads): verify/generate median ratio ${median.toFixed(3)} (p10 ${ratios[Math.floor(ratios.length * 0.1)]!.toFixed(3)}, p90 ${ratios[Math.floor(ratios.length * 0.9)]!.toFixed(3)}); per 1,000 completion tokens: generate ${((generateMs / tokens) * 1000).toFixed(0)} ms, verify ${((verifyMs / tokens) * 1000).toFixed(0)} ms (${ROUNDS} rounds, ${Math.round(tokens / ROUNDS)} tokens each); floor (the same tokens in one batch, nothing read back) ${floor.toFixed(3)} of generation`,
    );
    await context.dispose();
    await verifyContext.dispose();
    await model.dispose();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
