import { afterEach, describe, expect, test, vi } from 'vitest';
import { ChunkCoalescer } from './chunk-coalescer.js';
import { chatChunk, completionChunk } from './runtimes/openai-shapes.js';
import type { JsonObject } from './runtimes/runtime.js';

const meta = { id: 'chatcmpl-1', model: 'm', created: 1 };

/** A coalescer whose interval never fires within a test, and what it sent. */
function held() {
  const sent: { chunk: JsonObject; tokens: number }[] = [];
  const coalescer = new ChunkCoalescer({
    flushMs: 60_000,
    send: (chunk, tokens) => sent.push({ chunk, tokens }),
  });
  return { coalescer, sent };
}

/** Lets a macrotask run: what a push made due goes out there. */
const nextMacrotask = () => new Promise((resolve) => setImmediate(resolve));

// A failed fake-clock test must not leave fake timers to the next file its worker runs.
afterEach(() => {
  vi.useRealTimers();
});

describe('ChunkCoalescer', () => {
  test('default: role and first token at once, then one merged delta on flush', async () => {
    const { coalescer, sent } = held();
    coalescer.push(chatChunk(meta, { role: 'assistant', content: '' }), 0);
    await nextMacrotask();
    coalescer.push(chatChunk(meta, { content: 'a' }), 1);
    await nextMacrotask();
    expect(sent).toHaveLength(2);
    coalescer.push(chatChunk(meta, { content: 'b' }), 1);
    coalescer.push(chatChunk(meta, { content: 'c' }), 2);
    await nextMacrotask();
    expect(sent).toHaveLength(2);
    coalescer.flush();
    expect(sent).toEqual([
      { chunk: chatChunk(meta, { role: 'assistant', content: '' }), tokens: 0 },
      { chunk: chatChunk(meta, { content: 'a' }), tokens: 1 },
      { chunk: chatChunk(meta, { content: 'bc' }), tokens: 3 },
    ]);
  });

  test('behavior: completion text merges too', async () => {
    const { coalescer, sent } = held();
    coalescer.push(completionChunk(meta, 'x'), 1);
    await nextMacrotask();
    for (const piece of ['y', 'z']) coalescer.push(completionChunk(meta, piece), 1);
    coalescer.flush();
    expect(sent.map((s) => [s.chunk.choices, s.tokens])).toEqual([
      [[{ index: 0, text: 'x', logprobs: null, finish_reason: null }], 1],
      [[{ index: 0, text: 'yz', logprobs: null, finish_reason: null }], 2],
    ]);
  });

  test('behavior: text that comes while the first frame is due leaves in it, at once', async () => {
    // A relayed server's read can hold the role chunk and several tokens: none waits for flushMs.
    const { coalescer, sent } = held();
    coalescer.push(chatChunk(meta, { role: 'assistant', content: '' }), 0);
    coalescer.push(chatChunk(meta, { content: 'a' }), 1);
    coalescer.push(chatChunk(meta, { content: 'b' }), 2);
    await nextMacrotask();
    expect(sent).toEqual([{ chunk: chatChunk(meta, { role: 'assistant', content: 'ab' }), tokens: 3 }]);
    coalescer.push(chatChunk(meta, { content: 'c' }), 1);
    coalescer.flush();
    expect(sent.map((s) => s.chunk)).toEqual([
      chatChunk(meta, { role: 'assistant', content: 'ab' }),
      chatChunk(meta, { content: 'c' }),
    ]);
  });

  test('behavior: with flushMs 0, chunks of one turn share a frame; each turn sends its own', async () => {
    const sent: { chunk: JsonObject; tokens: number }[] = [];
    const coalescer = new ChunkCoalescer({
      flushMs: 0,
      send: (chunk, tokens) => sent.push({ chunk, tokens }),
    });
    for (const piece of ['x', 'y', 'z']) coalescer.push(completionChunk(meta, piece), 1);
    await nextMacrotask();
    coalescer.push(completionChunk(meta, 'w'), 1);
    coalescer.push(completionChunk(meta, '', 'stop'), 0);
    await nextMacrotask();
    expect(sent).toEqual([
      { chunk: completionChunk(meta, 'xyz'), tokens: 3 },
      { chunk: completionChunk(meta, 'w'), tokens: 1 },
      { chunk: completionChunk(meta, '', 'stop'), tokens: 0 },
    ]);
  });

  test('behavior: released text joined by text of the same turn stays in order', async () => {
    const { coalescer, sent } = held();
    coalescer.push(completionChunk(meta, 'a'), 1);
    await nextMacrotask();
    coalescer.push(completionChunk(meta, 'b'), 1); // held
    coalescer.push(completionChunk(meta, '', 'stop'), 0); // releases 'b', then is due itself
    coalescer.push(completionChunk(meta, 'c'), 1); // after a finish chunk: never joined to 'b'
    coalescer.flush();
    expect(sent.map((s) => s.chunk)).toEqual([
      completionChunk(meta, 'a'),
      completionChunk(meta, 'b'),
      completionChunk(meta, '', 'stop'),
      completionChunk(meta, 'c'),
    ]);
  });

  test('behavior: a push never sends inside the call; the next macrotask or flush() sends, in order', async () => {
    const { coalescer, sent } = held();
    // A token loop pushes, then asks for the next token: the frame must not be written in between.
    coalescer.push(chatChunk(meta, { content: 'a' }), 1);
    expect(sent).toHaveLength(0);
    await nextMacrotask();
    expect(sent.map((s) => s.chunk)).toEqual([chatChunk(meta, { content: 'a' })]);
    // A finish chunk is due at once but waits too; flush() (before the result) sends all, in order.
    coalescer.push(chatChunk(meta, { content: 'b' }), 1);
    coalescer.push(chatChunk(meta, {}, 'stop'), 0);
    expect(sent).toHaveLength(1);
    coalescer.flush();
    expect(sent.map((s) => s.chunk)).toEqual([
      chatChunk(meta, { content: 'a' }),
      chatChunk(meta, { content: 'b' }),
      chatChunk(meta, {}, 'stop'),
    ]);
    await nextMacrotask();
    expect(sent).toHaveLength(3);
  });

  test('behavior: a finish chunk flushes what is held first and goes out as it is', async () => {
    const { coalescer, sent } = held();
    coalescer.push(chatChunk(meta, { content: 'a' }), 1);
    await nextMacrotask();
    coalescer.push(chatChunk(meta, { content: 'b' }), 1);
    coalescer.push(chatChunk(meta, {}, 'length'), 0);
    await nextMacrotask();
    expect(sent.map((s) => s.chunk.choices)).toEqual([
      chatChunk(meta, { content: 'a' }).choices,
      chatChunk(meta, { content: 'b' }).choices,
      chatChunk(meta, {}, 'length').choices,
    ]);
  });

  test('behavior: chunks with other fields or another envelope are never merged', async () => {
    const { coalescer, sent } = held();
    coalescer.push(chatChunk(meta, { content: 'a' }), 1);
    await nextMacrotask();
    coalescer.push(chatChunk(meta, { content: 'b' }), 1);
    coalescer.push(chatChunk({ ...meta, id: 'chatcmpl-2' }, { content: 'c' }), 1);
    const toolCall = chatChunk(meta, { tool_calls: [{ index: 0, function: { arguments: '{' } }] });
    coalescer.push(toolCall, 1);
    const withLogprobs = {
      ...chatChunk(meta, { content: 'd' }),
      choices: [{ index: 0, delta: { content: 'd' }, logprobs: { content: [] }, finish_reason: null }],
    };
    coalescer.push(withLogprobs, 1);
    coalescer.flush();
    expect(sent.map((s) => s.chunk)).toEqual([
      chatChunk(meta, { content: 'a' }),
      chatChunk(meta, { content: 'b' }),
      chatChunk({ ...meta, id: 'chatcmpl-2' }, { content: 'c' }),
      toolCall,
      withLogprobs,
    ]);
  });

  test('behavior: held text goes out after flushMs without another push', () => {
    // Fake clocks: with real ones a loaded machine may let flushMs pass between two pushes.
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'],
    });
    const sent: string[] = [];
    const coalescer = new ChunkCoalescer({
      flushMs: 5,
      send: (chunk) => sent.push((chunk.choices as { delta: { content: string } }[])[0]!.delta.content),
    });
    coalescer.push(chatChunk(meta, { content: 'a' }), 1);
    vi.advanceTimersByTime(1);
    coalescer.push(chatChunk(meta, { content: 'b' }), 1);
    coalescer.push(chatChunk(meta, { content: 'c' }), 1);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(['a']);
    vi.advanceTimersByTime(5);
    expect(sent).toEqual(['a', 'bc']);
    vi.useRealTimers();
  });

  test('behavior: held text goes out with the push after which the next is due past flushMs', () => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'],
    });
    const sent: string[] = [];
    const coalescer = new ChunkCoalescer({
      flushMs: 40,
      send: (chunk) => sent.push((chunk.choices as { delta: { content: string } }[])[0]!.delta.content),
    });
    const sleep = (ms: number) => vi.advanceTimersByTime(ms);
    const push = (content: string) => {
      coalescer.push(chatChunk(meta, { content }), 1);
      sleep(0); // the macrotask that sends what the push made due
    };
    push('a');
    sleep(15);
    push('b'); // held; deadline in 40 ms
    sleep(15);
    push('c'); // next due in ~15 ms: before the deadline
    expect(sent).toEqual(['a']);
    sleep(15);
    push('d'); // next due past the deadline: out now
    expect(sent).toEqual(['a', 'bcd']);
    sleep(50);
    push('e'); // slower than flushMs: nothing to wait for
    expect(sent).toEqual(['a', 'bcd', 'e']);
    push('f'); // held; the timer sends it when text stops
    sleep(40);
    expect(sent).toEqual(['a', 'bcd', 'e', 'f']);
    vi.useRealTimers();
  });

  test('behavior: discard drops what is held and what is due', async () => {
    const { coalescer, sent } = held();
    coalescer.push(chatChunk(meta, { content: 'a' }), 1);
    await nextMacrotask();
    coalescer.push(chatChunk(meta, { content: 'b' }), 1);
    coalescer.push(chatChunk(meta, {}, 'stop'), 0);
    coalescer.discard();
    coalescer.flush();
    await nextMacrotask();
    expect(sent.map((s) => s.chunk)).toEqual([chatChunk(meta, { content: 'a' })]);
  });

  test('behavior: without a count, a chunk carries the protocol default (one per choice with text)', async () => {
    const { coalescer, sent } = held();
    coalescer.push(completionChunk(meta, ''));
    coalescer.push(completionChunk(meta, 'a'));
    coalescer.push(completionChunk(meta, 'b'));
    coalescer.flush();
    expect(sent.map((s) => [s.chunk.choices, s.tokens])).toEqual([[completionChunk(meta, 'ab').choices, 2]]);
  });
});
