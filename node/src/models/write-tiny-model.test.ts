import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTinyModel } from '@gpumesh/protocol/conformance';
import { getLlama, LlamaCompletion } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tinyModelPath } from './tiny-model-path.js';
import { writeTinyModel } from './write-tiny-model.js';

const dir = join(tmpdir(), `gpumesh-tiny-test-${process.pid}`);
let modelPath: string;

beforeAll(async () => {
  ({ path: modelPath } = await writeTinyModel({ path: join(dir, 'tiny.gguf'), seed: 7 }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('writeTinyModel', () => {
  test('default: node-llama-cpp loads it, completes text and embeds', async () => {
    const llama = await getLlama({ gpu: false });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ threads: 1, contextSize: 256 });
    const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
    const text = await completion.generateCompletion('Once upon a time', { maxTokens: 16 });
    expect(typeof text).toBe('string');
    const embedding = await model.createEmbeddingContext({ threads: 1, contextSize: 256 });
    const { vector } = await embedding.getEmbeddingFor('hello');
    expect(vector.length).toBe(64);
    expect(vector.every(Number.isFinite)).toBe(true);
    // Byte-level vocabulary: any UTF-8 text tokenizes and detokenizes back to itself.
    const sample = 'Hello wörld ✓ — 你好\n\ttabs';
    expect(model.detokenize(model.tokenize(sample))).toBe(sample);
    await embedding.dispose();
    await context.dispose();
    await model.dispose();
  });

  test('behavior: byte-identical for a seed, different for another', async () => {
    const written = await readFile(modelPath);
    expect(Buffer.from(buildTinyModel({ seed: 7 })).equals(written)).toBe(true);
    expect(Buffer.from(buildTinyModel({ seed: 8 })).equals(written)).toBe(false);
    expect(written.subarray(0, 4).toString()).toBe('GGUF');
    expect(written.readUInt32LE(4)).toBe(3);
  });

  test('behavior: tinyModelPath generates once and reuses the file', async () => {
    const first = await tinyModelPath({ dir, seed: 3 });
    const second = await tinyModelPath({ dir, seed: 3 });
    expect(second).toBe(first);
    expect(await tinyModelPath({ dir, seed: 4 })).not.toBe(first);
  });

  test('error: width not divisible by heads', () => {
    expect(() => buildTinyModel({ width: 64, heads: 5 })).toThrow(RangeError);
  });
});
