/**
 * The trust arena's liars (test/trust-arena.test.ts): each the real daemon's runtime wrapped to lie
 * while claiming the default model's sha256 — other weights, no or random token ids, ids that do not
 * match the text, one genuine completion replayed, a detector of the old canaries.
 */
import type { Token } from 'node-llama-cpp';
import type { Runtime, RuntimeJob } from '../../node/src/runtimes/runtime.js';
import { seeded } from './arena-jobs.js';

/**
 * A liar: a wrapper around the real runtime serving `real` (A's weights) and `junk` (B's);
 * `detokenize` turns token ids into text (the default model's tokenizer).
 */
export type Lie = (
  runtime: Runtime,
  ids: { real: string; junk: string },
  tools: { detokenize(ids: Token[]): string },
) => Partial<Runtime>;
const randomIds = (n: number, random: () => number) =>
  Array.from({ length: n }, () => 3 + Math.floor(random() * 390)) as Token[];
/** The junk model's answer, as the real model's id. */
const junk = (runtime: Runtime, ids: { real: string; junk: string }, job: RuntimeJob) =>
  runtime.run({ ...job, model: ids.junk, request: { ...job.request, model: ids.junk } });
/** The old canaries' tells (issue 29): kind completion on a chat model, exactly four members, not streamed. */
const looksLikeOldCanary = (job: RuntimeJob) =>
  job.kind === 'completion' &&
  !job.stream &&
  Object.keys(job.request).sort().join() === 'max_tokens,model,prompt,temperature';
/** Every liar we could write, by name. */
export const LIARS: Record<string, Lie> = {
  'other weights': (runtime, ids) => ({ run: (job) => junk(runtime, ids, job) }),
  'no token ids': (runtime, ids) => ({
    run: (job) => junk(runtime, ids, { ...job, onTokenIds: undefined }),
  }),
  'random token ids': (runtime, ids, { detokenize }) => {
    const random = seeded(7);
    return {
      run: async (job) => {
        let prompt: number[] = [];
        const answer = await junk(runtime, ids, {
          ...job,
          stream: false,
          onChunk: undefined,
          onTokenIds: (t) => {
            prompt = t.prompt;
          },
        });
        const completion = randomIds(answer.usage.completion_tokens, random);
        const text = detokenize(completion);
        job.onTokenIds?.({ prompt, completion });
        const choice = (answer.choices as Record<string, unknown>[])[0]!;
        if (job.kind === 'chat') choice.message = { role: 'assistant', content: text };
        else choice.text = text;
        return answer;
      },
    };
  },
  'ids that do not match the text': (runtime, ids) => {
    const random = seeded(8);
    return {
      run: (job) =>
        junk(runtime, ids, {
          ...job,
          onTokenIds: (t) =>
            job.onTokenIds?.({ prompt: t.prompt, completion: randomIds(t.completion.length, random) }),
        }),
    };
  },
  'one genuine completion replayed': (runtime) => {
    let recorded:
      | {
          answer: Awaited<ReturnType<Runtime['run']>>;
          tokenIds: { prompt: number[]; completion: number[] };
        }
      | undefined;
    return {
      run: async (job) => {
        if (!recorded) {
          let tokenIds = { prompt: [] as number[], completion: [] as number[] };
          const answer = await runtime.run({
            ...job,
            stream: false,
            onChunk: undefined,
            onTokenIds: (t) => {
              tokenIds = t;
            },
          });
          recorded = { answer, tokenIds };
        }
        job.onTokenIds?.(recorded.tokenIds);
        return structuredClone(recorded.answer);
      },
    };
  },
  'a canary detector': (runtime, ids) => ({
    run: (job) => (looksLikeOldCanary(job) ? runtime.run(job) : junk(runtime, ids, job)),
  }),
};
