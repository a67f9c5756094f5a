/**
 * The prefix cache (NODE_PROTOCOL.md §9 "Prefix cache", v0.5): a job runs on the sequence that holds
 * most of its prompt, reports the tokens it did not evaluate again as `cached_tokens`, names what it
 * holds by prefix keys — and answers exactly as a fresh sequence does.
 */
import { prefixKeys } from '@gpumesh/protocol';
import type { LlamaContextSequence, Token } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JsonObject, Runtime, TokenIds } from '../runtime.js';
import { copyPrefix } from './copy-prefix.js';
import { generateText } from './generate-text.js';
import { createLlamaRuntime } from './llama-runtime.js';
import { SequencePool } from './sequence-pool.js';
import { NO_EOS, useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();
/** The tiny model with 4 sequences for conversations beyond its 2 for jobs. */
let pooled: Runtime;
beforeAll(async () => {
  pooled = await tinyRuntime(4);
});
afterAll(() => pooled?.close());

type Run = {
  text: string;
  ids: TokenIds;
  cached: number;
  prompt: number;
  chunks: { text: string; ids: number[] }[];
};

/** Runs a streamed job: its text, token ids, cached and prompt tokens, and each chunk's text and ids. */
async function run(
  runtime: Runtime,
  request: JsonObject,
  more: { continueFrom?: { text: string; tokenIds?: number[] }; kind?: 'chat' | 'completion' } = {},
): Promise<Run> {
  let ids: TokenIds | undefined;
  const chunks: Run['chunks'] = [];
  const response = await runtime.run({
    kind: more.kind ?? 'chat',
    model: 'tiny',
    request,
    stream: true,
    ...(more.continueFrom ? { continueFrom: more.continueFrom } : {}),
    onChunk: (chunk, _tokens, tokenIds) => {
      const choice = (chunk.choices as { delta?: { content?: string }; text?: string }[])[0]!;
      if (tokenIds?.length) chunks.push({ text: choice.text ?? choice.delta?.content ?? '', ids: tokenIds });
    },
    onTokenIds: (t) => {
      ids = t;
    },
  });
  const choice = (response.choices as { message?: { content: string }; text?: string }[])[0]!;
  return {
    text: choice.message?.content ?? choice.text ?? '',
    ids: ids!,
    cached: response.usage.prompt_tokens_details!.cached_tokens!,
    prompt: response.usage.prompt_tokens,
    chunks,
  };
}

/** Leaves `runtime`'s one sequence holding next to nothing of a chat prompt (BOS and a token or two). */
const unrelated = (runtime: Runtime) =>
  run(runtime, { prompt: 'zq', max_tokens: 1, logit_bias: NO_EOS }, { kind: 'completion' });

/** A runtime of the tiny model: 1 sequence, or 2 for jobs and `cache` more for conversations. */
async function tinyRuntime(cache?: number): Promise<Runtime> {
  const runtime = createLlamaRuntime({
    llama: tiny.llama,
    models: [
      cache === undefined
        ? { id: 'tiny', path: tiny.modelPath, maxConcurrency: 1, prefixCacheBytes: 0 }
        : { id: 'tiny', path: tiny.modelPath, maxConcurrency: 2, prefixCacheBytes: cache * 2 ** 30 },
    ],
  });
  await runtime.load();
  return runtime;
}

const commonPrefix = (a: readonly number[], b: readonly number[]) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

const system = {
  role: 'system',
  content: `You are a careful assistant. ${'Follow the house rules. '.repeat(40)}`,
};
const turn1 = (name: string) => ({
  model: 'gpumesh/tiny-chat',
  messages: [system, { role: 'user', content: `Hello, I am ${name}.` }],
  max_tokens: 12,
  temperature: 0,
  logit_bias: NO_EOS,
});
const turn2 = (first: JsonObject, answer: string) => ({
  ...first,
  messages: [
    ...(first.messages as JsonObject[]),
    { role: 'assistant', content: answer },
    { role: 'user', content: 'Go on.' },
  ],
});

describe('prefix cache', () => {
  test("default: a second turn reuses the first turn's tokens and reports them", async () => {
    const first = turn1('Ada');
    const one = await run(pooled, first);
    const two = await run(pooled, turn2(first, one.text));
    // The sequence held turn 1's prompt and answer; turn 2's prompt shares at least the prompt.
    const held = [...one.ids.prompt, ...one.ids.completion];
    const shared = commonPrefix(held, two.ids.prompt);
    expect(commonPrefix(one.ids.prompt, two.ids.prompt)).toBeGreaterThan(100);
    expect(two.cached).toBeGreaterThanOrEqual(commonPrefix(one.ids.prompt, two.ids.prompt));
    // All of what it shares, but a last sampled token never evaluated (the job ended after it).
    expect(two.cached).toBeLessThanOrEqual(Math.min(shared, two.prompt - 1));
    expect(two.cached).toBeGreaterThanOrEqual(Math.min(shared, two.prompt - 1) - 1);
    expect(two.cached).toBeLessThan(two.prompt);
  });

  test('behavior: the same prompt again reuses all of it but its last token', async () => {
    const request = turn1('Grace');
    const one = await run(pooled, request);
    const again = await run(pooled, request);
    expect(again.cached).toBe(again.prompt - 1);
    expect(again.text).toBe(one.text);
  });

  test('behavior: advertises the keys of the conversation it just served, longest first', async () => {
    const request = turn1('Linus');
    await run(pooled, request);
    const keys = prefixKeys('gpumesh/tiny-chat', undefined, request.messages);
    const held = pooled.prefixCache!();
    expect(held[0]!.model).toBe('gpumesh/tiny-chat');
    expect(held[0]!.keys.slice(0, 2)).toEqual([keys[1], keys[0]]);
  });

  test('behavior: a conversation with a different start runs on another sequence (LRU), keeping the first', async () => {
    const first = turn1('Barbara');
    const one = await run(pooled, first);
    await run(pooled, { ...first, messages: [{ role: 'user', content: 'Something else entirely.' }] });
    const two = await run(pooled, turn2(first, one.text));
    expect(two.cached).toBeGreaterThanOrEqual(commonPrefix(one.ids.prompt, two.ids.prompt));
  });

  test('behavior: a new conversation sharing the system prompt evicts the least recently used one, not the youngest', async () => {
    const runtime = await tinyRuntime(4);
    try {
      // Six conversations fill the six sequences, oldest first; the oldest has the longest history.
      const names = ['Alexandria Constantinople Montgomery', 'Bo', 'Cy', 'Di', 'Ed', 'F'];
      const firsts = names.map(turn1);
      const answers: Run[] = [];
      for (const first of firsts) answers.push(await run(runtime, first));
      // A seventh: every sequence shares its system prompt; it takes the oldest conversation's.
      await run(runtime, turn1('Gus'));
      const youngest = await run(runtime, turn2(firsts[5]!, answers[5]!.text));
      expect(youngest.cached).toBeGreaterThanOrEqual(
        commonPrefix(answers[5]!.ids.prompt, youngest.ids.prompt),
      );
      const oldest = await run(runtime, turn2(firsts[0]!, answers[0]!.text));
      expect(oldest.cached).toBeLessThan(commonPrefix(answers[0]!.ids.prompt, oldest.ids.prompt));
    } finally {
      await runtime.close();
    }
  });

  test('behavior: cached or fresh, the same answer — greedy, seeded, under a grammar, with logit_bias, continued', async () => {
    const cold = await tinyRuntime();
    try {
      const base = turn1('Edsger');
      const variants: { request: JsonObject; continueFrom?: { text: string; tokenIds: number[] } }[] = [
        { request: base },
        { request: { ...base, temperature: 1, seed: 7, top_p: 0.9, presence_penalty: 0.5 } },
        { request: { ...base, response_format: { type: 'json_object' }, max_tokens: 16 } },
        { request: { ...base, logit_bias: { ...NO_EOS, '40': 5, '41': -100 } } },
      ];
      for (const { request } of variants) {
        const warm = await run(pooled, request);
        const again = await run(pooled, request);
        await unrelated(cold);
        const coldRun = await run(cold, request);
        expect(again.cached).toBeGreaterThan(100);
        expect(coldRun.cached).toBeLessThan(5);
        expect(again.text).toBe(coldRun.text);
        expect(again.ids.completion).toEqual(coldRun.ids.completion);
        expect(warm.text).toBe(coldRun.text);
      }
      // A continuation from the token ids of the first 3 chunks: replayed on a cached sequence as on a fresh one.
      const whole = await run(pooled, base);
      const delivered = whole.chunks.slice(0, 3);
      const continueFrom = {
        text: delivered.map((c) => c.text).join(''),
        tokenIds: delivered.flatMap((c) => c.ids),
      };
      const cachedRest = await run(pooled, base, { continueFrom });
      await unrelated(cold);
      const coldRest = await run(cold, base, { continueFrom });
      expect(cachedRest.cached).toBeGreaterThan(100);
      expect(coldRest.cached).toBeLessThan(5);
      expect(cachedRest.text).toBe(coldRest.text);
      expect(cachedRest.ids.completion).toEqual(coldRest.ids.completion);
      // max_tokens counts the new tokens: the continued answer runs past the uninterrupted one's end.
      expect((continueFrom.text + cachedRest.text).startsWith(whole.text)).toBe(true);
    } finally {
      await cold.close();
    }
  });

  test('behavior: a completion job reports its cached tokens too', async () => {
    const request = {
      model: 'gpumesh/tiny-chat',
      prompt: 'Once upon a time '.repeat(30),
      max_tokens: 4,
      logit_bias: NO_EOS,
    };
    await run(pooled, request, { kind: 'completion' });
    const again = await run(pooled, request, { kind: 'completion' });
    expect(again.cached).toBe(again.prompt - 1);
  });
});

describe('prefix cache: a new conversation starts from the shared prefix another sequence holds', () => {
  test("behavior: its first turn reads the other conversation's system prompt from cache and answers as a fresh sequence does", async () => {
    const runtime = await tinyRuntime(4);
    const cold = await tinyRuntime();
    try {
      const one = await run(runtime, turn1('Ada'));
      // Greedy and seeded: each a new conversation, run on a sequence never used before.
      for (const request of [turn1('Bob'), { ...turn1('Cy'), temperature: 1, seed: 7, top_p: 0.9 }]) {
        const copied = await run(runtime, request);
        const shared = commonPrefix(one.ids.prompt, copied.ids.prompt);
        expect(shared).toBeGreaterThan(100);
        // Exactly the shared prefix: its own sequence held nothing, so none of it was evaluated.
        expect(copied.cached).toBe(shared);
        await unrelated(cold);
        const fresh = await run(cold, request);
        expect(fresh.cached).toBeLessThan(5);
        expect(copied.ids.prompt).toEqual(fresh.ids.prompt);
        expect(copied.ids.completion).toEqual(fresh.ids.completion);
        expect(copied.text).toBe(fresh.text);
      }
    } finally {
      await cold.close();
      await runtime.close();
    }
  });

  test("behavior: the copy wipes no conversation: each one's next turn finds its own history", async () => {
    const runtime = await tinyRuntime(4);
    try {
      const [ada, bob] = [turn1('Ada'), turn1('Bob')];
      const adaOne = await run(runtime, ada);
      const bobOne = await run(runtime, bob);
      const adaTwo = await run(runtime, turn2(ada, adaOne.text));
      const bobTwo = await run(runtime, turn2(bob, bobOne.text));
      // More than the shared system prompt: the whole of turn 1's prompt, its own.
      expect(adaTwo.cached).toBeGreaterThanOrEqual(adaOne.prompt);
      expect(bobTwo.cached).toBeGreaterThanOrEqual(bobOne.prompt);
    } finally {
      await runtime.close();
    }
  });

  test('behavior: the shared prefix is never copied from a sequence running a job', async () => {
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
    // One thread, as the runtime runs on small machines: more are far slower there (llama-runtime.ts).
    const context = await model.createContext({ sequences: 3, contextSize: 1024, threads: 1 });
    try {
      const pool = new SequencePool([0, 1, 2].map(() => context.getSequence()));
      const prompt = (name: string) => model.tokenize(`${system.content} Hello, I am ${name}.`);
      const answer = (promptTokens: Token[]) => (sequence: LlamaContextSequence) =>
        generateText({ sequence, promptTokens, maxTokens: 4, temperature: 0, stop: [] });
      const ada = prompt('Ada');
      await pool.use({ prompt: ada }, answer(ada));
      // Ada's next job takes her sequence, the only one holding the system prompt, and holds it.
      let release!: () => void;
      const running = pool.use({ prompt: ada }, () => new Promise<void>((resolve) => (release = resolve)));
      const bob = prompt('Bob');
      const whileBusy = await pool.use({ prompt: bob }, answer(bob));
      release();
      await running;
      expect(commonPrefix(ada, bob)).toBeGreaterThan(100);
      expect(whileBusy.cachedTokens).toBe(0);
      // Idle again, it is copied: the next new conversation, on the last sequence never used, reuses it.
      const cy = prompt('Cy');
      const whenIdle = await pool.use({ prompt: cy }, answer(cy));
      expect(whenIdle.cachedTokens).toBe(Math.max(commonPrefix(ada, cy), commonPrefix(bob, cy)));
    } finally {
      await context.dispose();
      await model.dispose();
    }
  });

  test('behavior: copyPrefix copies exactly the tokens asked, and without the internal method copies nothing', async () => {
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
    const context = await model.createContext({ sequences: 3, contextSize: 1024, threads: 1 });
    try {
      const tokens = model.tokenize(`${system.content} Hello, I am Ada.`);
      const [source, target, withoutCopy] = [0, 1, 2].map(() => context.getSequence()) as [
        LlamaContextSequence,
        LlamaContextSequence,
        LlamaContextSequence,
      ];
      await source.evaluateWithoutGeneratingNewTokens(tokens);
      // Fails when a node-llama-cpp upgrade drops or changes the internal method: see copy-prefix.ts.
      expect(await copyPrefix(target, source, 100)).toBe(true);
      expect(target.contextTokens).toEqual(tokens.slice(0, 100));
      expect(source.contextTokens).toEqual(tokens);
      // A node-llama-cpp without it (the method shadowed on this one sequence): nothing copied, the
      // sequence untouched, the job prefills as before.
      Object.defineProperty(withoutCopy, '_copyStateFromOtherSequence', { value: undefined });
      expect(await copyPrefix(withoutCopy, source, 100)).toBe(false);
      expect(withoutCopy.nextTokenIndex).toBe(0);
    } finally {
      await context.dispose();
      await model.dispose();
    }
  });
});
