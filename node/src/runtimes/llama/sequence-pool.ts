import { MAX_PREFIX_CACHE_KEYS, MAX_PREFIX_CACHE_MODELS, type PrefixCache } from '@gpumesh/protocol';
import type { LlamaContextSequence, Token } from 'node-llama-cpp';
import { copyPrefix } from './copy-prefix.js';

/** What a sequence holds, as prefix keys: the last chat job it served (NODE_PROTOCOL.md §9 "Prefix cache"). */
export type HeldPrefix = { model: string; keys: readonly string[] };

type Slot = {
  sequence: LlamaContextSequence;
  lastUsed: number;
  /** The prompt tokens of the last job it ran (what it holds beyond them is that job's answer). */
  prompt: number;
  held?: HeldPrefix;
};

/**
 * The fewest prompt tokens a copy from another sequence must save (#startFromSharedPrefix). A copy
 * waits for the context's lock and copies the source's whole KV stream (llama.cpp keeps one per
 * sequence), so its cost grows with the context length and the model, not the prefix: on mini-chat
 * at 4,096 tokens it took ~2 ms, as long as evaluating 2–3 tokens (2 cores). 64 leaves a wide
 * margin for longer contexts and faster prefill (a GPU) while missing no shared system prompt and
 * tools, which are hundreds to thousands of tokens.
 */
export const MIN_COPIED_TOKENS = 64;

/** How a job takes a sequence: the prompt it will evaluate, to pick the one holding most of it. */
export type SequenceRequest = {
  prompt?: readonly Token[];
  /** Recorded as what the sequence holds when `work` succeeds (a chat job's prefix keys). */
  holds?: HeldPrefix;
};

/**
 * A model context's sequences and the KV state they keep between jobs. A job takes the idle
 * sequence that already holds most of its prompt (generate-text.ts then evaluates only the rest;
 * see #take for the choice), else the least recently used one — so the pool is an LRU cache of
 * recent conversations, as many as it has sequences (the memory budget decides how many:
 * loaded-model.ts). A sequence taken holding less of the prompt than another idle one (a new
 * conversation sharing an agent's system prompt and tools) first gets that one's KV state of the
 * shared prefix copied in. Jobs beyond the sequences wait for one.
 */
export class SequencePool {
  readonly #slots: Slot[];
  readonly #idle: Slot[];
  readonly #waiters: ((slot: Slot) => void)[] = [];
  /** A clock for recency: a counter never ties. */
  #tick = 0;

  constructor(sequences: readonly LlamaContextSequence[]) {
    this.#slots = sequences.map((sequence) => ({ sequence, lastUsed: 0, prompt: 0 }));
    this.#idle = [...this.#slots];
  }

  /** Sequences running a job now. */
  get busy(): number {
    return this.#slots.length - this.#idle.length;
  }

  get size(): number {
    return this.#slots.length;
  }

  /** Runs `work` on the idle sequence holding most of `request.prompt` (waiting for one if none is idle). */
  async use<T>(request: SequenceRequest, work: (sequence: LlamaContextSequence) => Promise<T>): Promise<T> {
    const slot =
      this.#take(request.prompt) ?? (await new Promise<Slot>((resolve) => this.#waiters.push(resolve)));
    slot.held = undefined;
    slot.prompt = request.prompt?.length ?? 0;
    try {
      if (request.prompt) await this.#startFromSharedPrefix(slot, request.prompt);
      const result = await work(slot.sequence);
      if (request.holds) slot.held = request.holds;
      return result;
    } finally {
      slot.lastUsed = ++this.#tick;
      this.#release(slot);
    }
  }

  /** Gives a slot back: to the first job waiting for one, else to the idle ones. */
  #release(slot: Slot): void {
    const next = this.#waiters.shift();
    if (next) next(slot);
    else this.#idle.push(slot);
  }

  /**
   * Copies into `slot` the KV state of the longest prefix of `prompt` an idle sequence holds, when
   * that saves at least {@link MIN_COPIED_TOKENS} over what `slot` holds itself: a new conversation
   * starts from the system prompt and tools another conversation holds, and the job evaluates only
   * the rest. The source is idle (a running job's state is changing) and kept from jobs while it is
   * copied; its own state stays as it was. Nothing copied, the job evaluates what `slot` lacks.
   */
  async #startFromSharedPrefix(slot: Slot, prompt: readonly Token[]): Promise<void> {
    const own = reusable(slot.sequence, prompt);
    let source: { slot: Slot; tokens: number } | undefined;
    for (const other of this.#idle) {
      const tokens = reusable(other.sequence, prompt);
      if (tokens - own >= MIN_COPIED_TOKENS && tokens > (source?.tokens ?? 0))
        source = { slot: other, tokens };
    }
    if (!source) return;
    this.#idle.splice(this.#idle.indexOf(source.slot), 1);
    try {
      await copyPrefix(slot.sequence, source.slot.sequence, source.tokens);
    } finally {
      this.#release(source.slot);
    }
  }

  /**
   * The prefix keys the pool holds, per model, most recent first: each sequence's keys longest
   * first (the whole conversation it last served leads), at most 64 per model and 8 models.
   */
  prefixCache(): PrefixCache {
    const byModel = new Map<string, string[]>();
    const recent = this.#slots
      .flatMap((slot) => (slot.held ? [{ held: slot.held, lastUsed: slot.lastUsed }] : []))
      .sort((a, b) => b.lastUsed - a.lastUsed);
    for (const { held } of recent) {
      let keys = byModel.get(held.model);
      if (!keys) {
        if (byModel.size === MAX_PREFIX_CACHE_MODELS) continue;
        keys = [];
        byModel.set(held.model, keys);
      }
      for (const key of [...held.keys].reverse()) {
        if (keys.length === MAX_PREFIX_CACHE_KEYS) break;
        if (!keys.includes(key)) keys.push(key);
      }
    }
    return [...byModel].map(([model, keys]) => ({ model, keys }));
  }

  /**
   * Takes an idle slot for `prompt`: the one it extends (the last prompt the slot ran begins this
   * one: the same conversation's next turn, or the same prompt again; the answer after it may be
   * rendered otherwise than it was sampled) with the longest reuse; else a slot never used, so a
   * new conversation gets its own sequence while the pool has room (sharing a system prompt with
   * another would wipe that one's turns, and the two would take turns wiping each other); else,
   * among those that save more tokens than they wipe (a shared system prompt and tools), the least
   * recently used; else the least recently used. Least recently used, not most saved: what a slot
   * holds beyond the shared prompt is its conversation's history, and the shortest history is the
   * youngest conversation — the likeliest to come back (an agent's next turn). The slot taken may
   * then start from another's copy of the shared prompt (#startFromSharedPrefix).
   */
  #take(prompt: readonly Token[] | undefined): Slot | undefined {
    let pick: { slot: Slot; rank: number; score: number } | undefined;
    for (const slot of this.#idle) {
      const held = slot.sequence.nextTokenIndex;
      const reuse = prompt && held > 0 ? reusable(slot.sequence, prompt) : 0;
      const wiped = held - reuse;
      const [rank, score] =
        reuse > 0 && reuse >= Math.min(slot.prompt, prompt!.length - 1)
          ? [3, reuse]
          : held === 0
            ? [2, 0]
            : reuse > wiped
              ? [1, -slot.lastUsed]
              : [0, -slot.lastUsed];
      if (!pick || rank > pick.rank || (rank === pick.rank && score > pick.score))
        pick = { slot, rank, score };
    }
    if (pick) this.#idle.splice(this.#idle.indexOf(pick.slot), 1);
    return pick?.slot;
  }
}

/** Tokens of `prompt` the sequence holds (at most all but its last, which must be evaluated for logits). */
export function reusable(sequence: LlamaContextSequence, prompt: readonly Token[]): number {
  return Math.min(sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex, prompt.length - 1);
}
