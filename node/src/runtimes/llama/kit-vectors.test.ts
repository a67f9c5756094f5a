/**
 * The conformance kit's reference verifications (protocol/vectors/verify/kit-model.json) against
 * this runtime: the kit model scores each case's completion as the file says, well within the
 * tolerance the kit grants, so a drift in node-llama-cpp (or in the model generator) shows here
 * before it fails an implementer. `GPUMESH_WRITE_VECTORS=1` regenerates the file: completions
 * sampled from the kit model and from another model of the same shape, scored by the kit model.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildKitModel, KIT_MODEL_OPTIONS, KIT_MODEL_SHA256 } from '@gpumesh/protocol';
import {
  VERIFY_VECTORS_URL,
  type VerifyVectors,
  verificationMismatch,
  verifyVectors,
} from '@gpumesh/protocol/conformance';
import { getLlama, type LlamaModel, type Token } from 'node-llama-cpp';
import { afterAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import { generateText } from './generate-text.js';
import { verifyTokens } from './verify-tokens.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-kit-vectors-'));
const llama = await getLlama({ gpu: false });
afterAll(() => rm(dir, { recursive: true, force: true }));

const TOP_K = 8;
/** The kit grants ± 0.05 nats; this runtime must stay within a tenth of that. */
const DRIFT_NATS = 0.005;
const round4 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10_000) / 10_000 : -1e9);

async function load(path: string): Promise<LlamaModel> {
  return llama.loadModel({ modelPath: path });
}

async function score(model: LlamaModel, promptTokenIds: number[], completionTokenIds: number[]) {
  const context = await model.createContext({ threads: 1, contextSize: 512 });
  try {
    const verified = await verifyTokens(context.getSequence(), {
      promptTokens: promptTokenIds as Token[],
      completionTokens: completionTokenIds as Token[],
      topK: TOP_K,
    });
    return {
      logprobs: verified.logprobs.map(round4),
      in_top_k: verified.inTopK.map((x) => (x ? '1' : '0')).join(''),
      kthLogprobs: verified.kthLogprobs.map(round4),
    };
  } finally {
    await context.dispose();
  }
}

async function sample(model: LlamaModel, promptTokens: Token[], seed: number): Promise<number[]> {
  const context = await model.createContext({ threads: 1, contextSize: 512 });
  try {
    const { tokenIds } = await generateText({
      sequence: context.getSequence(),
      promptTokens,
      maxTokens: 24,
      temperature: 1,
      seed,
      stop: [],
    });
    return tokenIds;
  } finally {
    await context.dispose();
  }
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
  const cases = [];
  for (const [name, from, description] of [
    ['kit_sample', kit, 'a completion sampled from the kit model at temperature 1: high log-probabilities'],
    [
      'other_weights',
      other,
      'a completion sampled from other weights of the same shape: low log-probabilities',
    ],
  ] as const) {
    const completionTokenIds = await sample(from, promptTokens, 7);
    cases.push({
      name,
      description,
      promptTokenIds,
      completionTokenIds,
      ...(await score(kit, promptTokenIds, completionTokenIds)),
    });
  }
  await other.dispose();
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
    toleranceNats: 0.05,
    cases,
  };
  await writeFile(fileURLToPath(VERIFY_VECTORS_URL), `${JSON.stringify(vectors, null, 2)}\n`);
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
        const scored = await score(kit, reference.promptTokenIds, reference.completionTokenIds);
        expect(verificationMismatch(reference, scored, DRIFT_NATS), reference.name).toBeUndefined();
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
