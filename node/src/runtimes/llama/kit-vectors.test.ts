/**
 * The conformance kit's reference verifications (protocol/vectors/verify/kit-model.json) against
 * this runtime: the kit model scores each case's completion as the file says, well within the
 * tolerance the kit grants, so a drift in node-llama-cpp (or in the model generator) shows here
 * before it fails an implementer. Cases with `sampling` (v0.2) are scored under those settings
 * too: sampled log-probabilities, entropies, their variances, top-k masses, edge gaps, texts.
 * `GPUMESH_WRITE_VECTORS=1` regenerates the file: completions sampled from the kit model and from
 * another model of the same shape, scored by the kit model exactly as the daemon answers a verify
 * job (verifyTokens, verificationResponse). A case already in the file keeps its completion.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sampling } from '@gpumesh/protocol';
import {
  buildKitModel,
  KIT_MODEL_OPTIONS,
  KIT_MODEL_SHA256,
  type SampledTolerance,
  sampledMismatch,
  VERIFY_VECTORS_URL,
  type VerifyVectors,
  verificationMismatch,
  verifyVectors,
} from '@gpumesh/protocol/conformance';
import { getLlama, type LlamaModel, type Token, TokenBias } from 'node-llama-cpp';
import { afterAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import { generateText } from './generate-text.js';
import { verificationResponse } from './verification-response.js';
import { verifyTokens } from './verify-tokens.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-kit-vectors-'));
const llama = await getLlama({ gpu: false });
afterAll(() => rm(dir, { recursive: true, force: true }));

const TOP_K = 8;
/** The kit grants ± 0.05 nats; this runtime must stay within a tenth of that (and of each v0.2 tolerance). */
const DRIFT_NATS = 0.005;
const DRIFT: SampledTolerance = { nats: DRIFT_NATS, entropyVarRelative: 0.005, topKMass: 0.001 };
/** What the kit grants a verifier's v0.2 fields. */
const KIT_SAMPLED_TOLERANCE: SampledTolerance = { nats: 0.05, entropyVarRelative: 0.05, topKMass: 0.01 };
const COMPLETION_TOKENS = 24;
const SEED = 7;
/**
 * A chat job's settings with every stage of the processed distribution in play: temperature, top-p,
 * both penalties, a boost and a ban (NODE_PROTOCOL.md §9 "Sampling").
 */
const SAMPLED: Sampling = {
  temperature: 0.8,
  topP: 0.9,
  presencePenalty: 0.5,
  frequencyPenalty: 0.3,
  logitBias: { '264': -100, '358': 1.5 },
};
const GREEDY: Sampling = { temperature: 0 };
/** How far below the argmax the greedy case's detour token must be: clear of any numerics. */
const DETOUR_MIN_GAP_NATS = 0.5;

const kthRound4 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10_000) / 10_000 : -1e9);

async function load(path: string): Promise<LlamaModel> {
  return llama.loadModel({ modelPath: path });
}

/** The case's expected fields: the daemon's answer to the verify job (runVerify's code path). */
async function score(
  model: LlamaModel,
  promptTokenIds: number[],
  completionTokenIds: number[],
  sampling?: Sampling,
) {
  const context = await model.createContext({ threads: 1, contextSize: 512 });
  try {
    const verified = await verifyTokens(context.getSequence(), {
      promptTokens: promptTokenIds as Token[],
      completionTokens: completionTokenIds as Token[],
      topK: TOP_K,
      ...(sampling ? { sampling } : {}),
    });
    const request = { promptTokenIds, completionTokenIds, topK: TOP_K, ...(sampling ? { sampling } : {}) };
    const answer = verificationResponse({ model, modelId: 'gpumesh-kit', request, verified });
    // In the vectors' order; JSON leaves out the v0.2 fields of a case without sampling (undefined).
    return {
      logprobs: answer.logprobs,
      in_top_k: answer.in_top_k,
      kthLogprobs: verified.kthLogprobs.map(kthRound4),
      sampled_logprobs: answer.sampled_logprobs,
      entropy: answer.entropy,
      entropy_var: answer.entropy_var,
      top_k_mass: answer.top_k_mass,
      edge_gaps: answer.edge_gaps,
      prompt_text: answer.prompt_text,
      completion_text: answer.completion_text,
    };
  } finally {
    await context.dispose();
  }
}

/** Up to `maxTokens` tokens sampled from `model` after `promptTokens` under `sampling`. */
async function sample(
  model: LlamaModel,
  promptTokens: Token[],
  sampling: Sampling,
  maxTokens = COMPLETION_TOKENS,
): Promise<number[]> {
  const context = await model.createContext({ threads: 1, contextSize: 512 });
  // The bias as the daemon applies logit_bias (llama-runtime.ts): added to the logit; −100 bans.
  const tokenBias = new TokenBias(model.tokenizer);
  for (const [token, bias] of Object.entries(sampling.logitBias ?? {})) {
    tokenBias.set(Number(token) as Token, bias <= -100 ? 'never' : { logit: bias });
  }
  try {
    const { tokenIds } = await generateText({
      sequence: context.getSequence(),
      promptTokens,
      maxTokens,
      temperature: sampling.temperature,
      ...(sampling.topP !== undefined ? { topP: sampling.topP } : {}),
      ...(sampling.presencePenalty ? { presencePenalty: sampling.presencePenalty } : {}),
      ...(sampling.frequencyPenalty ? { frequencyPenalty: sampling.frequencyPenalty } : {}),
      ...(sampling.logitBias ? { tokenBias } : {}),
      seed: SEED,
      stop: [],
    });
    return tokenIds;
  } finally {
    await context.dispose();
  }
}

/**
 * A greedy completion with one detour: at some position the runner-up instead of the most likely
 * token (its edge gap ≥ DETOUR_MIN_GAP_NATS), greedy again after it. Every other position is kept.
 */
async function greedyWithDetour(kit: LlamaModel, promptTokens: Token[]): Promise<number[]> {
  const promptTokenIds = promptTokens.map(Number);
  const greedy = await sample(kit, promptTokens, GREEDY);
  for (let at = 4; at < greedy.length - 4; at++) {
    const prefix = greedy.slice(0, at) as Token[];
    const banned: Sampling = { temperature: 0, logitBias: { [greedy[at]!]: -100 } };
    const [detour] = await sample(kit, [...promptTokens, ...prefix], banned, 1);
    if (detour === undefined) continue;
    const rest = await sample(
      kit,
      [...promptTokens, ...prefix, detour as Token],
      GREEDY,
      COMPLETION_TOKENS - at - 1,
    );
    const completion = [...prefix, detour, ...rest];
    const { edge_gaps: gaps } = await score(kit, promptTokenIds, completion, GREEDY);
    if (gaps!.every((gap, i) => (i === at ? gap >= DETOUR_MIN_GAP_NATS : gap === 0))) return completion;
  }
  throw new Error('no position of the greedy completion has a runner-up clear of the argmax');
}

async function writeVectors(kit: LlamaModel, bytes: number) {
  const other = await load(
    (
      await writeTinyModel({
        ...KIT_MODEL_OPTIONS,
        seed: KIT_MODEL_OPTIONS.seed + 1,
        path: join(dir, 'b.gguf'),
      })
    ).path,
  );
  const promptTokens = [kit.tokens.bos!, ...kit.tokenize('The network checks every node')];
  const promptTokenIds = promptTokens.map(Number);
  // A published case keeps its completion (implementers may pin it; the generator's sampling has
  // changed since): only its scores are made again. Rename a case to sample it afresh.
  // (Read here, not with verifyVectors(), which would cache the file this function replaces.)
  const file = fileURLToPath(VERIFY_VECTORS_URL);
  const previous = JSON.parse(await readFile(file, 'utf8')) as VerifyVectors;
  const published = new Map(previous.cases.map((c) => [c.name, c.completionTokenIds]));
  const completion = async (name: string, make: () => Promise<number[]>) => published.get(name) ?? make();
  const definitions: [name: string, description: string, completion: number[], sampling?: Sampling][] = [
    [
      'kit_sample',
      'a completion sampled from the kit model at temperature 1: high log-probabilities',
      await completion('kit_sample', () => sample(kit, promptTokens, { temperature: 1 })),
    ],
    [
      'other_weights',
      'a completion sampled from other weights of the same shape: low log-probabilities',
      await completion('other_weights', () => sample(other, promptTokens, { temperature: 1 })),
    ],
    [
      'kit_sampled',
      'v0.2: a completion sampled from the kit model under the sampling settings (temperature 0.8, top-p 0.9, penalties, a boost and a ban), described under them',
      await completion('kit_sampled', () => sample(kit, promptTokens, SAMPLED)),
      SAMPLED,
    ],
    [
      'other_weights_sampled',
      'v0.2: a completion sampled from other weights under the same settings: many tokens the kit model’s sampler would not have kept (sampled_logprobs null, edge gaps > 0)',
      await completion('other_weights_sampled', () => sample(other, promptTokens, SAMPLED)),
      SAMPLED,
    ],
    [
      'kit_greedy_detour',
      'v0.2: a greedy (temperature 0) completion of the kit model with one runner-up token in place of the most likely: that position is not kept (null, a positive edge gap), every other is (0)',
      await completion('kit_greedy_detour', () => greedyWithDetour(kit, promptTokens)),
      GREEDY,
    ],
  ];
  await other.dispose();
  const cases = [];
  for (const [name, description, completionTokenIds, sampling] of definitions) {
    cases.push({
      name,
      description,
      ...(sampling ? { sampling } : {}),
      promptTokenIds,
      completionTokenIds,
      ...(await score(kit, promptTokenIds, completionTokenIds, sampling)),
    });
  }
  const vectors: VerifyVectors = {
    description:
      'Reference verify results of the conformance kit model (gpumesh-conformance kit-model), made with node-llama-cpp on CPU. NODE_PROTOCOL.md §9 "Verification", §13.',
    model: {
      sha256: KIT_MODEL_SHA256,
      bytes,
      vocabularySize: kit.fileInfo.metadata.tokenizer.ggml.tokens.length,
      contextLength: kit.trainContextSize,
    },
    topK: TOP_K,
    toleranceNats: KIT_SAMPLED_TOLERANCE.nats,
    sampledTolerance: KIT_SAMPLED_TOLERANCE,
    cases,
  };
  await writeFile(file, `${JSON.stringify(vectors, null, 2)}\n`);
}

describe('kit verify vectors', () => {
  test('behavior: the kit model scores every reference case as the vectors say', {
    timeout: 60_000,
  }, async () => {
    const bytes = buildKitModel();
    const path = join(dir, 'kit.gguf');
    await writeFile(path, bytes);
    const kit = await load(path);
    try {
      if (process.env.GPUMESH_WRITE_VECTORS === '1') await writeVectors(kit, bytes.length);
      const vectors = verifyVectors();
      expect(vectors.model).toEqual({
        sha256: KIT_MODEL_SHA256,
        bytes: bytes.length,
        vocabularySize: kit.fileInfo.metadata.tokenizer.ggml.tokens.length,
        contextLength: kit.trainContextSize,
      });
      for (const reference of vectors.cases) {
        const scored = await score(
          kit,
          reference.promptTokenIds,
          reference.completionTokenIds,
          reference.sampling,
        );
        expect(verificationMismatch(reference, scored, DRIFT_NATS), reference.name).toBeUndefined();
        expect(sampledMismatch(reference, scored, DRIFT), reference.name).toBeUndefined();
        // This runtime's texts are the reference's, whatever the kit allows a verifier to omit.
        expect([scored.prompt_text, scored.completion_text]).toEqual([
          reference.prompt_text,
          reference.completion_text,
        ]);
        const mean = scored.logprobs.reduce((s, x) => s + x, 0) / scored.logprobs.length;
        console.log(
          `kit vector ${reference.name}: mean logprob ${mean.toFixed(2)}, in top ${TOP_K}: ${scored.in_top_k}`,
        );
      }
    } finally {
      await kit.dispose();
    }
  });
});
