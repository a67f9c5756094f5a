import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from '../../models/write-tiny-model.js';
import {
  type OpenAiCompatibleServer,
  startOpenAiCompatibleServer,
} from '../../testing/start-openai-compatible-server.js';
import { createLlamaRuntime } from '../llama/llama-runtime.js';
import type { JsonObject, Runtime } from '../runtime.js';
import { createOpenAiRuntime } from './openai-runtime.js';

// A vLLM or Ollama server cannot run on these machines, so a small real HTTP server speaking the
// OpenAI convention, backed by the node-llama-cpp runtime and the generated model, stands in for it.
const dir = await mkdtemp(join(tmpdir(), 'gpumesh-openai-runtime-'));
let local: Runtime;
let server: OpenAiCompatibleServer;
let relay: Runtime;
const NO_EOS = { '2': -100 };

beforeAll(async () => {
  const { path } = await writeTinyModel({ path: join(dir, 'tiny.gguf'), seed: 5 });
  local = createLlamaRuntime({
    llama: await getLlama({ gpu: false }),
    models: [{ id: 'tiny-upstream', path, maxConcurrency: 2, embeddingId: 'tiny-embed' }],
  });
  await local.load();
  server = await startOpenAiCompatibleServer(local);
  relay = createOpenAiRuntime({
    baseUrl: server.baseUrl,
    name: 'vllm',
    models: [
      { id: 'tiny', upstream: 'tiny-upstream', maxConcurrency: 3 },
      { id: 'tiny-embed', family: 'embedding' },
    ],
  });
  await relay.load();
});
afterAll(async () => {
  await server.close();
  await local.close();
  await rm(dir, { recursive: true, force: true });
});

describe('createOpenAiRuntime', () => {
  test('default: reports the server models it offers', () => {
    expect(relay.models()).toEqual([
      { id: 'tiny', family: 'chat', contextLength: 2048, maxConcurrency: 3 },
      { id: 'tiny-embed', family: 'embedding', contextLength: 2048, maxConcurrency: 4 },
    ]);
    expect(relay.alive()).toBe(true);
  });

  test('behavior: without a list, offers every model the server lists', async () => {
    const all = createOpenAiRuntime({ baseUrl: server.baseUrl });
    await all.load();
    expect(all.models().map((m) => [m.id, m.family])).toEqual([
      ['tiny-upstream', 'chat'],
      ['tiny-embed', 'embedding'],
    ]);
  });

  test('behavior: relays a chat stream chunk by chunk, with the server usage', async () => {
    const chunks: JsonObject[] = [];
    const response = await relay.run({
      kind: 'chat',
      model: 'tiny',
      // 24 tokens: byte tokens of one character arrive as one chunk, so a sampled answer can take
      // fewer chunks than tokens (the sharp default model samples them more often).
      request: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 24, logit_bias: NO_EOS },
      stream: true,
      onChunk: (chunk) => chunks.push(chunk),
    });
    expect(chunks.length).toBeGreaterThan(6);
    expect(chunks.every((chunk) => chunk.model === 'tiny')).toBe(true);
    const deltas = chunks.map(
      (c) => (c.choices as { delta: { content?: string } }[])[0]!.delta.content ?? '',
    );
    const content = (response.choices as { message: { content: string } }[])[0]!.message.content;
    expect(deltas.join('')).toBe(content);
    expect(response.usage.completion_tokens).toBe(24);
    expect(response.usage.prompt_tokens).toBeGreaterThan(0);
    expect(response.model).toBe('tiny');
  });

  test('behavior: non-streamed completion and embeddings', async () => {
    const completion = await relay.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'abc', max_tokens: 5, logit_bias: NO_EOS },
      stream: false,
    });
    expect(completion.usage.completion_tokens).toBe(5);
    const embedding = await relay.run({
      kind: 'embedding',
      model: 'tiny-embed',
      request: { input: ['a', 'b'] },
      stream: false,
    });
    expect((embedding.data as unknown[]).length).toBe(2);
  });

  test('error: cancellation, unknown model, server errors, unreachable server', async () => {
    const controller = new AbortController();
    let seen = 0;
    const running = relay.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'x', max_tokens: 1500, logit_bias: NO_EOS },
      stream: true,
      signal: controller.signal,
      onChunk: () => {
        if (++seen === 3) controller.abort();
      },
    });
    await expect(running).rejects.toMatchObject({ code: 'job_cancelled' });
    await expect(
      relay.run({ kind: 'chat', model: 'nope', request: {}, stream: false }),
    ).rejects.toMatchObject({
      code: 'model_not_found',
    });
    await expect(
      relay.run({ kind: 'chat', model: 'tiny', request: { messages: 'bad' }, stream: false }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    const gone = createOpenAiRuntime({ baseUrl: 'http://127.0.0.1:9/v1' });
    await expect(gone.load()).rejects.toMatchObject({ code: 'runtime_unreachable' });
  });
});
