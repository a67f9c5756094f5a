import { chunkTokens } from '@gpumesh/protocol';
import type { JsonObject } from './runtimes/runtime.js';

export { DEFAULT_CHUNK_FLUSH_MS } from './chunk-flush.js';

export type ChunkCoalescerOptions = {
  /**
   * Longest a chunk waits for more text; 0 sends every chunk as it comes (chunks that come in the
   * same turn of the event loop still share a frame).
   */
  flushMs: number;
  /**
   * Sends one chunk frame's content: the OpenAI chunk, the completion tokens it carries and their
   * ids (undefined unless every chunk joined in it came with its ids).
   */
  send: (chunk: JsonObject, tokens: number, tokenIds: number[] | undefined) => void;
};

type Choice = {
  index?: unknown;
  delta?: { role?: unknown; content?: unknown };
  text?: unknown;
  logprobs?: unknown;
  finish_reason?: unknown;
};

/** The choice's text when the chunk is plain text that may be merged, else undefined. */
function plainText(chunk: JsonObject, asContinuation: boolean): string | undefined {
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as Choice;
  if (typeof choice !== 'object' || choice === null || (choice.index ?? 0) !== 0) return undefined;
  if (choice.finish_reason != null || choice.logprobs != null) return undefined;
  for (const key of Object.keys(choice)) {
    if (!['index', 'delta', 'text', 'logprobs', 'finish_reason'].includes(key)) return undefined;
  }
  if (typeof choice.text === 'string' && choice.delta === undefined) return choice.text;
  const delta = choice.delta;
  if (typeof delta !== 'object' || delta === null || typeof delta.content !== 'string') return undefined;
  // A continuation adds content only; the chunk it joins may open with the role.
  const allowed = asContinuation ? ['content'] : ['role', 'content'];
  for (const key of Object.keys(delta)) if (!allowed.includes(key)) return undefined;
  return delta.content;
}

/** True when the two chunks differ only in their choices (same id, object, created, model …). */
function sameEnvelope(a: JsonObject, b: JsonObject): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (key !== 'choices' && a[key] !== b[key]) return false;
  return true;
}

/**
 * Coalesces one streamed job's OpenAI chunks into fewer chunk frames. The first chunk with text
 * (and anything before it) goes out at once (on the next macrotask, see below), so time to first
 * token does not wait; after that, plain text chunks are merged into one delta for up to
 * `flushMs`. Any other chunk (a finish reason, tool calls, logprobs) first flushes what is held,
 * then goes out as it is, so order is kept. The job's owner calls `flush()` before the result and
 * `discard()` on cancel.
 *
 * While text keeps coming, held text goes out with the push after which the next one is expected
 * (at the last gap between pushes) past the deadline, so the send rides on the wake-up that
 * delivered the token, and the timer (a wake-up of its own, between tokens) only fires when text
 * stops or slows down.
 *
 * A push never sends inside the call: what is due goes out on the next macrotask (setImmediate),
 * or at once on `flush()`. Text pushed while a text chunk is still due (the same turn: a relayed
 * server's read holding several chunks, or `flushMs` 0) joins that chunk's frame instead of waiting
 * for the next frame, so what is ready when a frame leaves leaves in it: one frame, one delta,
 * the tokens summed. A push comes from inside the token loop, and the loop asks
 * node-llama-cpp for the next token only after the push returns; a frame's socket write (~100–300
 * µs of the daemon's main thread on loopback, see above) done there delayed that next decode.
 * Deferred, the write runs while the decode does (node-llama-cpp dispatches it to its worker
 * within the same microtask run): a perf profile of the medium bench model shows the daemon's
 * token-loop callbacks (libuv work_done) now take as much main-thread time as the baseline's,
 * the frames' cost having moved to the check phase.
 */
export class ChunkCoalescer {
  private held?: { chunk: JsonObject; text: string; tokens: number; ids: Ids; deadline: number };
  private timer?: NodeJS.Timeout;
  /** Chunks due, in order, waiting for the macrotask that sends them. */
  private outbox: { chunk: JsonObject; tokens: number; ids: Ids }[] = [];
  private immediate?: NodeJS.Immediate;
  private textSent = false;
  /** When the previous chunk was pushed (performance.now()), and the gap before it. */
  private lastPush = 0;
  private gap = 0;

  constructor(private readonly options: ChunkCoalescerOptions) {}

  /**
   * Takes the next chunk; `tokens` defaults to the protocol's count (chunkTokens: one per choice
   * with text); `tokenIds`, when known, are their ids (joined chunks join them).
   */
  push(chunk: JsonObject, tokens: number = chunkTokens(chunk), tokenIds?: number[]): void {
    const ids: Ids = tokenIds ?? (tokens === 0 ? [] : undefined);
    if (this.options.flushMs <= 0 || !this.textSent) {
      this.lastPush = performance.now();
      this.release();
      this.textSent = chunkTokens(chunk) > 0;
      this.send(chunk, tokens, ids);
      return;
    }
    const now = performance.now();
    this.gap = now - this.lastPush;
    this.lastPush = now;
    const held = this.held;
    if (!held && this.joinDue(chunk, tokens, ids)) return;
    if (held) {
      const text = sameEnvelope(held.chunk, chunk) ? plainText(chunk, true) : undefined;
      if (text !== undefined) {
        held.text += text;
        held.tokens += tokens;
        held.ids = joinIds(held.ids, ids);
        if (now + this.gap >= held.deadline) this.release();
        return;
      }
      this.release();
    }
    const text = plainText(chunk, false);
    if (text === undefined) {
      this.send(chunk, tokens, ids);
      return;
    }
    // Text slower than one chunk per flushMs has nothing to wait for.
    if (this.gap >= this.options.flushMs) {
      this.send(chunk, tokens, ids);
      return;
    }
    this.held = { chunk, text, tokens, ids, deadline: now + this.options.flushMs };
    this.timer = setTimeout(() => this.flush(), this.options.flushMs);
  }

  /** Sends what is due and what is held now. */
  flush(): void {
    this.release();
    this.sendOutbox();
  }

  /** Drops what is held and what is due (the job was cancelled: nothing more may be sent for it). */
  discard(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held = undefined;
    clearImmediate(this.immediate);
    this.immediate = undefined;
    this.outbox = [];
  }

  /** Makes what is held due. */
  private release(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    this.send(withText(held.chunk, held.text), held.tokens, held.ids);
  }

  /** Queues a chunk for the next macrotask (joined to the last due chunk when both are text). */
  private send(chunk: JsonObject, tokens: number, ids: Ids): void {
    if (this.joinDue(chunk, tokens, ids)) return;
    this.outbox.push({ chunk, tokens, ids });
    this.immediate ??= setImmediate(() => this.sendOutbox());
  }

  /** Adds a text chunk to the last chunk due, when that one is text of the same stream; else false. */
  private joinDue(chunk: JsonObject, tokens: number, ids: Ids): boolean {
    const last = this.outbox.at(-1);
    if (!last) return false;
    const text = plainText(chunk, true);
    if (text === undefined) return false;
    const dueText = plainText(last.chunk, false);
    if (dueText === undefined || !sameEnvelope(last.chunk, chunk)) return false;
    last.chunk = withText(last.chunk, dueText + text);
    last.tokens += tokens;
    last.ids = joinIds(last.ids, ids);
    return true;
  }

  private sendOutbox(): void {
    clearImmediate(this.immediate);
    this.immediate = undefined;
    const due = this.outbox;
    this.outbox = [];
    for (const { chunk, tokens, ids } of due) this.options.send(chunk, tokens, ids?.length ? ids : undefined);
  }
}

/** A chunk's token ids: known (an empty list for a chunk of no token), or not. */
type Ids = number[] | undefined;

/** Two chunks' ids joined: known only when both are. */
function joinIds(a: Ids, b: Ids): Ids {
  return a && b ? [...a, ...b] : undefined;
}

/** The chunk with its one choice's text (delta content or completion text) replaced. */
function withText(chunk: JsonObject, text: string): JsonObject {
  const choice = (chunk.choices as Choice[])[0]!;
  const merged =
    choice.delta === undefined
      ? { ...choice, text }
      : { ...choice, delta: { ...choice.delta, content: text } };
  return { ...chunk, choices: [merged] };
}
