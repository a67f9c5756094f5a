/** Embedding jobs (run-embedding.ts). */
import { describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

describe('runEmbedding', () => {
  test('behavior: embeddings count the input tokens', async () => {
    const response = await tiny.runtime.run({
      kind: 'embedding',
      model: 'tiny-embed',
      request: { input: ['hello world', 'bye'] },
      stream: false,
    });
    const data = response.data as { embedding: number[]; index: number }[];
    expect(data.map((d) => d.index)).toEqual([0, 1]);
    expect(data[0]!.embedding).toHaveLength(64);
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
    expect(response.usage.prompt_tokens).toBe(
      model.tokenize('hello world').length + model.tokenize('bye').length,
    );
    await model.dispose();
  });

  test('behavior: embeddings of token ids, and dimensions truncated to unit length', async () => {
    const embed = (request: JsonObject) =>
      tiny.runtime.run({
        kind: 'embedding',
        model: 'tiny-embed',
        request,
        stream: false,
      }) as unknown as Promise<JsonObject & { data: { embedding: number[] }[] }>;
    const full = await embed({ input: 'hello' });
    const width = full.data[0]!.embedding.length;
    const short = await embed({ input: ['hello', 'world'], dimensions: 4 });
    expect(short.data.map((d) => d.embedding.length)).toEqual([4, 4]);
    for (const { embedding } of short.data) expect(Math.hypot(...embedding)).toBeCloseTo(1, 6);
    // The short vector points where the full one's first components do.
    const head = full.data[0]!.embedding.slice(0, 4);
    const scale = Math.hypot(...head);
    for (const [i, x] of short.data[0]!.embedding.entries()) expect(x).toBeCloseTo(head[i]! / scale, 5);
    await expect(embed({ input: 'hello', dimensions: width + 1 })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('dimensions'),
    });
    const ids = await embed({ input: [[300, 301], [302]] });
    expect(ids.data).toHaveLength(2);
    expect((await embed({ input: [300, 301] })).data).toHaveLength(1);
    await expect(embed({ input: [[10_000_000]] })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});
