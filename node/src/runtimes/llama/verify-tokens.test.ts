/**
 * Teacher-forced verification on real weights (node-llama-cpp, CPU): two generated models of the
 * same shape and different seeds, with a sharper output layer (outputStd 0.5) so their next-token
 * distributions are informative. Completions sampled from A — greedy and at temperatures up to
 * 1.5, with other seeds — score high under A; completions sampled from B score low: the check tells
 * weights apart, not sampling noise. The measured figures are printed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, type LlamaContext, type LlamaModel, type Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import { generateText } from './generate-text.js';
import { summarize, VERIFY_THRESHOLDS, verifyTokens } from './verify-tokens.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-verify-'));
const llama = await getLlama({ gpu: false });
const PROMPTS = ['Hello, how are you', 'The capital of France is', 'Write a poem about', 'Once upon a time'];
const TOP_K = 8;
let a: { model: LlamaModel; context: LlamaContext };
let b: { model: LlamaModel; context: LlamaContext };

async function load(seed: number) {
  const { path } = await writeTinyModel({ path: join(dir, `m${seed}.gguf`), seed, outputStd: 0.5 });
  const model = await llama.loadModel({ modelPath: path });
  return { model, context: await model.createContext({ threads: 1, contextSize: 512, sequences: 3 }) };
}

beforeAll(async () => {
  a = await load(101);
  b = await load(202);
});
afterAll(async () => {
  await a?.model.dispose();
  await b?.model.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** Samples a completion from `from`, then verifies it on A. */
async function sampleAndVerify(from: typeof a, prompt: string, temperature: number, seed: number) {
  const promptTokens: Token[] = [from.model.tokens.bos!, ...from.model.tokenize(prompt)];
  const generator = from.context.getSequence();
  const { tokenIds } = await generateText({
    sequence: generator,
    promptTokens,
    maxTokens: 32,
    temperature,
    seed,
    stop: [],
    tokenBias: undefined,
  });
  generator.dispose();
  const verifier = a.context.getSequence();
  const verified = await verifyTokens(verifier, { promptTokens, completionTokens: tokenIds, topK: TOP_K });
  verifier.dispose();
  return summarize(verified);
}

describe('verifyTokens', () => {
  test('behavior: completions from the claimed weights pass at any temperature; other weights fail', async () => {
    const honest = [];
    for (const temperature of [0, 0.7, 1, 1.5]) {
      for (let i = 0; i < 6; i++) {
        honest.push(await sampleAndVerify(a, `${PROMPTS[i % PROMPTS.length]} ${i}`, temperature, 1000 + i));
      }
    }
    const liar = [];
    for (const temperature of [0, 1]) {
      for (let i = 0; i < 6; i++) {
        liar.push(await sampleAndVerify(b, `${PROMPTS[i % PROMPTS.length]} ${i}`, temperature, 2000 + i));
      }
    }
    const passes = (s: ReturnType<typeof summarize>) =>
      s.meanLogprob >= VERIFY_THRESHOLDS.minMeanLogprob &&
      s.topKFraction >= VERIFY_THRESHOLDS.minTopKFraction;
    const worstHonest = Math.min(...honest.map((s) => s.meanLogprob));
    const bestLiar = Math.max(...liar.map((s) => s.meanLogprob));
    console.log(
      `verify: honest mean logprob ≥ ${worstHonest.toFixed(2)} (top-${TOP_K} ≥ ${Math.min(...honest.map((s) => s.topKFraction)).toFixed(2)}); other weights ≤ ${bestLiar.toFixed(2)} (top-${TOP_K} ≤ ${Math.max(...liar.map((s) => s.topKFraction)).toFixed(2)})`,
    );
    expect(honest.every(passes)).toBe(true);
    expect(liar.some(passes)).toBe(false);
  }, 60_000);

  test('default: a completion the model would choose greedily scores its own probabilities exactly', async () => {
    const s = a.context.getSequence();
    const promptTokens: Token[] = [a.model.tokens.bos!, ...a.model.tokenize('abc')];
    const { tokenIds } = await generateText({
      sequence: s,
      promptTokens,
      maxTokens: 8,
      temperature: 0,
      stop: [],
    });
    const verified = await verifyTokens(s, { promptTokens, completionTokens: tokenIds, topK: 1 });
    s.dispose();
    // Greedy: every token was the top one, and a probability is at most 1.
    expect(verified.inTopK.every(Boolean)).toBe(true);
    expect(verified.logprobs.every((x) => x <= 1e-6 && x > -20)).toBe(true);
  });

  test('property: in 20 seeded runs (new model pairs) the other weights fail at once; 1,000 honest canaries never fail', async () => {
    const failsBefore: number[] = [];
    for (let run = 0; run < 20; run++) {
      const pathA = (
        await writeTinyModel({ path: join(dir, `ra${run}.gguf`), seed: 5000 + run, outputStd: 0.5 })
      ).path;
      const pathB = (
        await writeTinyModel({ path: join(dir, `rb${run}.gguf`), seed: 7000 + run, outputStd: 0.5 })
      ).path;
      const ma = await llama.loadModel({ modelPath: pathA });
      const mb = await llama.loadModel({ modelPath: pathB });
      const ca = await ma.createContext({ threads: 1, contextSize: 256 });
      const cb = await mb.createContext({ threads: 1, contextSize: 256 });
      // Canaries to the liar until two fail (the coordinator's default suspension), at most 20.
      let canaries = 0;
      let failed = 0;
      while (failed < 2 && canaries < 20) {
        const promptTokens: Token[] = [
          mb.tokens.bos!,
          ...mb.tokenize(`${PROMPTS[canaries % PROMPTS.length]} ${run}`),
        ];
        const seq = cb.getSequence();
        const { tokenIds } = await generateText({
          sequence: seq,
          promptTokens,
          maxTokens: 32,
          temperature: 1,
          seed: run * 100 + canaries,
          stop: [],
        });
        seq.dispose();
        const verifier = ca.getSequence();
        const s = summarize(
          await verifyTokens(verifier, { promptTokens, completionTokens: tokenIds, topK: TOP_K }),
        );
        verifier.dispose();
        canaries++;
        if (
          !(
            s.meanLogprob >= VERIFY_THRESHOLDS.minMeanLogprob &&
            s.topKFraction >= VERIFY_THRESHOLDS.minTopKFraction
          )
        )
          failed++;
      }
      failsBefore.push(canaries);
      await ca.dispose();
      await cb.dispose();
      await ma.dispose();
      await mb.dispose();
    }
    expect(Math.max(...failsBefore)).toBeLessThanOrEqual(20);

    // 1,000 honest canaries: A sampling at temperature 1 with fresh seeds, verified on A.
    const generator = a.context.getSequence();
    const verifier = a.context.getSequence();
    let flagged = 0;
    let worst = 0;
    for (let i = 0; i < 1000; i++) {
      const promptTokens: Token[] = [
        a.model.tokens.bos!,
        ...a.model.tokenize(`${PROMPTS[i % PROMPTS.length]} ${i}`),
      ];
      const { tokenIds } = await generateText({
        sequence: generator,
        promptTokens,
        maxTokens: 32,
        temperature: 1,
        seed: 90_000 + i,
        stop: [],
      });
      if (tokenIds.length === 0) continue;
      const s = summarize(
        await verifyTokens(verifier, { promptTokens, completionTokens: tokenIds, topK: TOP_K }),
      );
      worst = Math.min(worst, s.meanLogprob);
      if (
        !(
          s.meanLogprob >= VERIFY_THRESHOLDS.minMeanLogprob &&
          s.topKFraction >= VERIFY_THRESHOLDS.minTopKFraction
        )
      )
        flagged++;
    }
    generator.dispose();
    verifier.dispose();
    console.log(
      `verify: liars caught after ${Math.min(...failsBefore)}–${Math.max(...failsBefore)} canaries in 20 seeded runs; honest flagged ${flagged} of 1000 (worst mean logprob ${worst.toFixed(2)}); model A mean next-token entropy ${(await meanEntropy(a)).toFixed(2)} nats`,
    );
    expect(flagged).toBe(0);
  }, 300_000);
});

/** Mean entropy (nats) of A's next-token distribution over the positions of a few prompts. */
async function meanEntropy(m: typeof a): Promise<number> {
  const seq = m.context.getSequence();
  let total = 0;
  let n = 0;
  for (const prompt of PROMPTS) {
    await seq.clearHistory();
    const tokens = [m.model.tokens.bos!, ...m.model.tokenize(prompt)];
    const out = await seq.controlledEvaluate(
      tokens.map((t) => [
        t,
        { generateNext: { probabilities: true, options: { temperature: 1, topK: 0, topP: 1, minP: 0 } } },
      ]),
    );
    for (const item of out) {
      const probs = item?.next.probabilities;
      if (!probs) continue;
      for (const p of probs.values()) if (p > 0) total -= p * Math.log(p);
      n++;
    }
  }
  seq.dispose();
  return total / n;
}
