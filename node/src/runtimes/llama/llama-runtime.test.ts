/** The llama runtime as a whole: its offers, sequences shared by concurrent jobs, cancels, refusals. */
import { describe, expect, test } from 'vitest';
import { decodeDispatchSchedule } from './llama-runtime.js';
import { NO_EOS, useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

describe('createLlamaRuntime', () => {
  test('default: offers the model with its context and concurrency', () => {
    expect(tiny.runtime.models()).toEqual([
      {
        id: 'tiny',
        family: 'chat',
        contextLength: 2048,
        maxConcurrency: 2,
        continues: true,
        cachesPrefixes: true,
      },
      { id: 'tiny-embed', family: 'embedding', contextLength: 2048, maxConcurrency: 2 },
    ]);
    expect(tiny.runtime.info.name).toBe('node-llama-cpp');
    expect(tiny.runtime.alive()).toBe(true);
  });

  test("behavior: a lone job's decode is sent at once; concurrent jobs' wait a macrotask to batch", async () => {
    let running = 1;
    const sent: string[] = [];
    const schedule = decodeDispatchSchedule(() => running);
    schedule(() => sent.push('alone'));
    expect(sent).toEqual(['alone']);
    running = 2;
    schedule(() => sent.push('batched'));
    expect(sent).toEqual(['alone']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['alone', 'batched']);
  });

  test('behavior: concurrent jobs beyond maxConcurrency wait for a sequence', async () => {
    const job = (i: number) =>
      tiny.runtime.run({
        kind: 'completion',
        model: 'tiny',
        request: { prompt: `job ${i}`, max_tokens: 16, logit_bias: NO_EOS },
        stream: false,
      });
    // Temperature 1 samples EOS often from random weights; the ban must hold for every job.
    const responses = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(job));
    expect(responses.map((r) => r.usage.completion_tokens)).toEqual(Array(10).fill(16));
  });

  test('error: a cancelled job stops and rejects with job_cancelled', async () => {
    const controller = new AbortController();
    let chunks = 0;
    const running = tiny.runtime.run({
      kind: 'completion',
      model: 'tiny',
      request: { prompt: 'x', max_tokens: 1500, logit_bias: NO_EOS },
      stream: true,
      signal: controller.signal,
      onChunk: () => {
        if (++chunks === 5) controller.abort();
      },
    });
    await expect(running).rejects.toMatchObject({ code: 'job_cancelled' });
    expect(chunks).toBeLessThan(20);
  });

  test('error: options this node does not implement are refused, naming them', async () => {
    for (const [field, value] of [
      ['functions', [{ name: 'f', parameters: { type: 'object' } }]],
      ['audio', { voice: 'alloy', format: 'wav' }],
      // Alternatives without logprobs: true (OpenAI's 400 too).
      ['top_logprobs', 3],
    ] as const) {
      await expect(
        tiny.runtime.run({
          kind: 'chat',
          model: 'tiny',
          request: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, [field]: value },
          stream: false,
        }),
      ).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining(field) });
    }
  });

  test('error: unknown model, invalid request', async () => {
    await expect(
      tiny.runtime.run({ kind: 'chat', model: 'nope', request: {}, stream: false }),
    ).rejects.toMatchObject({
      code: 'model_not_found',
    });
    await expect(
      tiny.runtime.run({ kind: 'chat', model: 'tiny', request: { messages: 'hi' }, stream: false }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
  });

  test('error: a prompt or an input longer than the context is context_length_exceeded', async () => {
    const long = 'word '.repeat(3_000);
    await expect(
      tiny.runtime.run({
        kind: 'chat',
        model: 'tiny',
        request: { messages: [{ role: 'user', content: long }], max_tokens: 4 },
        stream: false,
      }),
    ).rejects.toMatchObject({ code: 'context_length_exceeded' });
    await expect(
      tiny.runtime.run({ kind: 'embedding', model: 'tiny-embed', request: { input: long }, stream: false }),
    ).rejects.toMatchObject({ code: 'context_length_exceeded' });
  });
});
