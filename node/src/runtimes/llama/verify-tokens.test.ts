/**
 * Teacher-forced verification on real weights (node-llama-cpp, CPU): the processed distribution
 * the verifier reconstructs from raw logits (@gpumesh/protocol `sampledPosition`) is the one
 * node-llama-cpp's own sampler chain samples from — bias, penalties, top-k, top-p, min-p,
 * temperature — so an honest node is judged on the distribution it really used. The statistical
 * decision on top of it is tried in test/trust-arena.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sampling } from '@gpumesh/protocol';
import { getLlama, type LlamaContext, type LlamaModel, type Token, TokenBias } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import { generateText } from './generate-text.js';
import { verifyTokens } from './verify-tokens.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-verify-'));
const llama = await getLlama({ gpu: false });
let m: { model: LlamaModel; context: LlamaContext };

beforeAll(async () => {
  const { path } = await writeTinyModel({ path: join(dir, 'm.gguf'), seed: 101 });
  const model = await llama.loadModel({ modelPath: path });
  m = { model, context: await model.createContext({ threads: 1, contextSize: 512, sequences: 2 }) };
});
afterAll(async () => {
  await m?.model.dispose();
  await rm(dir, { recursive: true, force: true });
});

const SETTINGS: Sampling[] = [
  { temperature: 1 },
  { temperature: 0.7, topP: 0.9 },
  { temperature: 1.5, topK: 20, minP: 0.02 },
  { temperature: 1, presencePenalty: 0.8, frequencyPenalty: 0.6 },
  { temperature: 1.2, logitBias: { '300': 3, '301': -100 } },
];

describe('verifyTokens with sampling settings', () => {
  test.each(SETTINGS)(
    'behavior: the processed distribution is node-llama-cpp’s own (%j)',
    async (sampling) => {
      const promptTokens: Token[] = [m.model.tokens.bos!, ...m.model.tokenize('The weather today is')];
      // The bias as the runtime builds it (llama-runtime.ts toTokenBias).
      const bias = new TokenBias(m.model.tokenizer);
      const biases = (bias as unknown as { _biases: Map<Token, number> })._biases;
      for (const [t, v] of Object.entries(sampling.logitBias ?? {})) {
        biases.set(Number(t) as Token, v <= -100 ? Number.NEGATIVE_INFINITY : v);
      }
      const generator = m.context.getSequence();
      const { tokenIds } = await generateText({
        tokenBias: bias,
        sequence: generator,
        promptTokens,
        maxTokens: 24,
        temperature: sampling.temperature,
        ...(sampling.topP ? { topP: sampling.topP } : {}),
        ...(sampling.topK ? { topK: sampling.topK } : {}),
        ...(sampling.minP ? { minP: sampling.minP } : {}),
        ...(sampling.presencePenalty ? { presencePenalty: sampling.presencePenalty } : {}),
        ...(sampling.frequencyPenalty ? { frequencyPenalty: sampling.frequencyPenalty } : {}),
        seed: 7,
        stop: [],
      });
      generator.dispose();
      expect(tokenIds.length).toBeGreaterThan(0);
      const verifier = m.context.getSequence();
      const verified = await verifyTokens(verifier, {
        promptTokens,
        completionTokens: tokenIds,
        topK: 8,
        sampling,
      });
      // node-llama-cpp's sampler, position by position, with the same options.
      await verifier.clearHistory();
      const predictors = [promptTokens.at(-1)!, ...tokenIds.slice(0, -1)];
      const output = await verifier.controlledEvaluate([
        ...promptTokens.slice(0, -1),
        ...predictors.map((token, i): [Token, object] => [
          token,
          {
            generateNext: {
              probabilities: true,
              options: {
                temperature: sampling.temperature,
                topK: sampling.topK ?? 0,
                topP: sampling.topP ?? 1,
                minP: sampling.minP ?? 0,
                tokenBias: bias,
                ...(sampling.presencePenalty || sampling.frequencyPenalty
                  ? {
                      repeatPenalty: {
                        punishTokens: tokenIds.slice(0, i),
                        penalty: 1,
                        presencePenalty: sampling.presencePenalty ?? 0,
                        frequencyPenalty: sampling.frequencyPenalty ?? 0,
                      },
                    }
                  : {}),
              },
            },
          },
        ]),
      ] as Parameters<typeof verifier.controlledEvaluate>[0]);
      verifier.dispose();
      tokenIds.forEach((token, i) => {
        const probabilities = output[promptTokens.length - 1 + i]!.next.probabilities!;
        const p = probabilities.get(token) ?? 0;
        const ours = verified.sampled![i]!;
        // The sampled token was kept, and its probability is the sampler's.
        expect(ours.sampledLogprob).not.toBeNull();
        expect(Math.abs(Math.exp(ours.sampledLogprob!) - p)).toBeLessThan(1e-4);
        let entropy = 0;
        for (const q of probabilities.values()) if (q > 0) entropy -= q * Math.log(q);
        expect(Math.abs(ours.entropy - entropy)).toBeLessThan(1e-3);
        expect(ours.edgeGap).toBe(0);
      });
    },
  );

  test('default: greedy tokens are the kept ones, with log-probability 0 and no entropy', async () => {
    const s = m.context.getSequence();
    const promptTokens: Token[] = [m.model.tokens.bos!, ...m.model.tokenize('abc')];
    const { tokenIds } = await generateText({
      sequence: s,
      promptTokens,
      maxTokens: 8,
      temperature: 0,
      stop: [],
    });
    const verified = await verifyTokens(s, {
      promptTokens,
      completionTokens: tokenIds,
      topK: 1,
      sampling: { temperature: 0 },
    });
    s.dispose();
    expect(verified.inTopK.every(Boolean)).toBe(true);
    expect(verified.sampled!.every((p) => p.sampledLogprob === 0 && p.entropy === 0 && p.edgeGap === 0)).toBe(
      true,
    );
  });

  test('behavior: a token the sampler could not have kept has no log-probability and a positive edge gap', async () => {
    const s = m.context.getSequence();
    const promptTokens: Token[] = [m.model.tokens.bos!, ...m.model.tokenize('abc')];
    const { tokenIds } = await generateText({
      sequence: s,
      promptTokens,
      maxTokens: 4,
      temperature: 0,
      stop: [],
    });
    const wrong = tokenIds.map((t) => ((t + 1) % 300) as Token);
    const verified = await verifyTokens(s, {
      promptTokens,
      completionTokens: wrong,
      topK: 1,
      sampling: { temperature: 0 },
    });
    s.dispose();
    expect(verified.sampled!.every((p) => p.sampledLogprob === null && p.edgeGap > 0)).toBe(true);
  });
});
