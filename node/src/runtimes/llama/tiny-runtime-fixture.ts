/** This folder's tests' runtime: the tiny random-weight model, loaded once per test file. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, type Llama } from 'node-llama-cpp';
import { afterAll, beforeAll } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import type { JobResponse, JsonObject, Runtime } from '../runtime.js';
import { createLlamaRuntime } from './llama-runtime.js';

/** The tiny model's end-of-sequence token, banned where a test needs an exact length. */
export const NO_EOS = { '2': -100 };

export type TinyRuntime = {
  /** The model as `tiny` (chat, 2 sequences) and its embeddings as `tiny-embed`. */
  readonly runtime: Runtime;
  /** The binding it runs on (for a test's own node-llama-cpp reference). */
  readonly llama: Llama;
  readonly modelPath: string;
  /** Runs a `kind` job of `request` on `tiny`, not streamed: its response. */
  whole(kind: 'chat' | 'completion', request: JsonObject): Promise<JobResponse>;
  /** Runs it streamed: the chunks it sent, in order. */
  chunks(kind: 'chat' | 'completion', request: JsonObject): Promise<JsonObject[]>;
};

/**
 * Loads the tiny model (seed 11) in a llama runtime before the file's tests and closes it after;
 * the fields are set once `beforeAll` ran.
 */
export function useTinyRuntime(): TinyRuntime {
  const state = {} as { runtime: Runtime; llama: Llama; modelPath: string; dir: string };
  const whole: TinyRuntime['whole'] = (kind, request) =>
    state.runtime.run({ kind, model: 'tiny', request, stream: false });
  const chunks: TinyRuntime['chunks'] = async (kind, request) => {
    const sent: JsonObject[] = [];
    await state.runtime.run({ kind, model: 'tiny', request, stream: true, onChunk: (c) => sent.push(c) });
    return sent;
  };
  beforeAll(async () => {
    state.dir = await mkdtemp(join(tmpdir(), 'gpumesh-llama-runtime-'));
    state.llama = await getLlama({ gpu: false });
    ({ path: state.modelPath } = await writeTinyModel({ path: join(state.dir, 'tiny.gguf'), seed: 11 }));
    state.runtime = createLlamaRuntime({
      llama: state.llama,
      models: [
        {
          id: 'tiny',
          path: state.modelPath,
          maxConcurrency: 2,
          embeddingId: 'tiny-embed',
          prefixCacheBytes: 0,
        },
      ],
    });
    await state.runtime.load();
  });
  afterAll(async () => {
    await state.runtime?.close();
    if (state.dir) await rm(state.dir, { recursive: true, force: true });
  });
  return Object.assign(state, { whole, chunks });
}
