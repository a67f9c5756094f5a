/**
 * The prefix cache in one real daemon on the mini-chat model (NODE_PROTOCOL.md §9 "Prefix cache"):
 * a conversation's second turn reports the tokens it reused as cached_tokens — exactly what its
 * sequence held of the new prompt — answers as a fresh evaluation does, is advertised by its key,
 * and reaches its first token sooner on a ~2,000-token system prompt (logged, not asserted).
 */
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFrame, encodeFrame, type FrameOf, prefixKeys } from '@gpumesh/protocol';
import { getLlama } from 'node-llama-cpp';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from './config.js';
import { type Daemon, startDaemon } from './daemon.js';
import { createLlamaRuntime } from './runtimes/llama/llama-runtime.js';
import type { Runtime, TokenIds } from './runtimes/runtime.js';
import { CoordinatorPeer, type PeerSession } from './testing/coordinator-peer.js';

const MINI_CHAT = fileURLToPath(
  new URL('../../models/mini-chat/gpumesh-mini-chat-Q8_0.gguf', import.meta.url),
);
const MODEL = 'gpumesh-mini-chat-Q8_0';
/** The id a coordinator routes the request under (request.model): the keys' model id. */
const ROUTED = 'gpumesh/mini-chat';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-daemon-prefix-'));
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  await rm(dir, { recursive: true, force: true });
});

/** A long agent-like system prompt: ~2,000 tokens of rules. */
const SYSTEM = Array.from(
  { length: 40 },
  (_, i) => `Rule ${i + 1}: answer the user politely, check every number twice and keep replies short.`,
).join('\n');

const request = (messages: Record<string, unknown>[]) => ({
  model: ROUTED,
  messages,
  max_tokens: 12,
  temperature: 0,
  stream: true,
});

/** Sends a streamed chat job; its result, and the ms from sending to the first chunk carrying a token. */
async function turn(session: PeerSession, jobId: string, messages: Record<string, unknown>[]) {
  const job = createFrame('job', {
    jobId,
    kind: 'chat',
    model: MODEL,
    request: request(messages),
    stream: true,
    timeoutMs: 120_000,
  });
  const sentAt = performance.now();
  session.ws.send(encodeFrame(job));
  await session.next('chunk', (c: FrameOf<'chunk'>) => c.jobId === jobId && (c.tokens ?? 0) > 0, 120_000);
  const firstTokenMs = performance.now() - sentAt;
  const result = await session.next('result', (r: FrameOf<'result'>) => r.jobId === jobId, 120_000);
  return { result, firstTokenMs, content: contentOf(result) };
}

const contentOf = (result: FrameOf<'result'>) =>
  (result.response.choices as { message: { content: string } }[])[0]!.message.content;

const commonPrefix = (a: readonly number[], b: readonly number[]) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

describe('a daemon serving mini-chat with its prefix cache', () => {
  test('default: the second turn reports the tokens it reused, answers as a fresh sequence does, and is advertised', {
    timeout: 300_000,
  }, async () => {
    await mkdir(join(dir, 'models'));
    await copyFile(MINI_CHAT, join(dir, 'models', `${MODEL}.gguf`));
    const peer = new CoordinatorPeer();
    cleanup.push(() => peer.close());
    await once(peer.wss, 'listening');
    const llama = await getLlama({ gpu: false });
    const config = loadConfig({
      env: {},
      flags: {
        coordinator: peer.url,
        'state-dir': dir,
        'models-dir': join(dir, 'models'),
        'health-port': '0',
        gpu: 'cpu',
        'max-concurrency': '2',
        'prefix-cache-bytes': String(2 ** 30),
      },
    });
    const daemon: Daemon = await startDaemon(config, { llama });
    cleanup.push(() => daemon.shutdown());
    const session = await peer.nextSession(0);
    await session.next('presence');

    const opening = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'What is 2 + 3?' },
    ];
    const one = await turn(session, 'turn-1', opening);
    const messages = [
      ...opening,
      { role: 'assistant', content: one.content },
      { role: 'user', content: 'And 4 + 5?' },
    ];
    const two = await turn(session, 'turn-2', messages);

    const usage1 = one.result.response.usage;
    const usage2 = two.result.response.usage;
    expect(usage1.prompt_tokens).toBeGreaterThan(1_500);
    expect(usage1.prompt_tokens_details?.cached_tokens).toBe(0);
    // What turn 1's sequence held: its prompt and answer (the last token too when the model ended
    // the answer; not when max_tokens cut it, as a sampled token is evaluated only before the next).
    const ids1 = one.result.tokenIds!;
    const ids2 = two.result.tokenIds!;
    const finish1 = (one.result.response.choices as { finish_reason: string }[])[0]!.finish_reason;
    const held = [...ids1.prompt, ...(finish1 === 'length' ? ids1.completion.slice(0, -1) : ids1.completion)];
    const reused = Math.min(commonPrefix(held, ids2.prompt), ids2.prompt.length - 1);
    expect(reused).toBeGreaterThan(usage1.prompt_tokens - 10);
    expect(usage2.prompt_tokens_details?.cached_tokens).toBe(reused);

    // Advertised under the routed id: the second turn's key leads.
    const key = prefixKeys(ROUTED, undefined, messages).at(-1);
    const presence = await session.next('presence', (p: FrameOf<'presence'>) =>
      Boolean(p.prefixCache?.some((entry) => entry.keys[0] === key)),
    );
    expect(presence.prefixCache![0]).toMatchObject({ model: ROUTED });

    // A fresh sequence answers the second turn with the same tokens, at its full prefill cost.
    const cold: Runtime = createLlamaRuntime({
      llama,
      models: [{ id: MODEL, path: MINI_CHAT, maxConcurrency: 1, prefixCacheBytes: 0 }],
    });
    cleanup.push(() => cold.close());
    await cold.load();
    let coldIds: TokenIds | undefined;
    let coldFirstTokenMs = 0;
    const startedAt = performance.now();
    const fresh = await cold.run({
      kind: 'chat',
      model: MODEL,
      request: request(messages),
      stream: true,
      onChunk: (_chunk, tokens) => {
        if ((tokens ?? 0) > 0 && coldFirstTokenMs === 0) coldFirstTokenMs = performance.now() - startedAt;
      },
      onTokenIds: (ids) => {
        coldIds = ids;
      },
    });
    expect(fresh.usage.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(coldIds!.prompt).toEqual(ids2.prompt);
    expect(coldIds!.completion).toEqual(ids2.completion);
    expect(contentOf({ response: fresh } as FrameOf<'result'>)).toBe(two.content);

    console.log(
      `prefix cache, mini-chat, ${usage2.prompt_tokens}-token prompt: time to first token ` +
        `${two.firstTokenMs.toFixed(0)} ms cached (${reused} tokens reused) vs ` +
        `${coldFirstTokenMs.toFixed(0)} ms fresh in-process and ${one.firstTokenMs.toFixed(0)} ms for turn 1 ` +
        `(${usage1.prompt_tokens} tokens, through the hub): ${(coldFirstTokenMs / two.firstTokenMs).toFixed(1)}× and ` +
        `${(one.firstTokenMs / two.firstTokenMs).toFixed(1)}× lower`,
    );
  });
});
