/**
 * Replayed traffic: the canaries no node can tell from client jobs (issue 29). A client's chat or
 * completion request, exactly as its node got it, is sent again a little later to another node
 * serving the same model, as a canary: it is client traffic, so no statistic of its text, shape or
 * timing sets it apart — made canaries (make-canary.ts) are word salad beside real prompts, and a
 * classifier of word statistics told them apart (AUC 0.85).
 *
 * Whose text: only requests whose client allows data collection (OpenRouter's
 * `provider.data_collection`, not "deny") — the same rule as spot checks, where one more node of
 * the network (a verifier) sees the prompt. Where it goes: never back to the node that served it
 * or to another node of the same owner (a node that saw the prompt once would know the second as
 * a canary), and to at most `maxReplays` nodes. How long: only while recent (`maxAgeMs`); the pool
 * is memory, bounded per model, lost on restart. With nothing to replay to a node, its canary is
 * made.
 *
 * note() is on the paid path: it keeps a reference, no copy, no serialising; size is checked when a
 * request is taken.
 */

export type Replayable = {
  kind: 'chat' | 'completion';
  stream: boolean;
  request: Record<string, unknown>;
};

/** A node as the pool knows it: its id and its owner (nodes of one owner count as one). */
export type ReplayNode = { nodeId: string; owner?: string | null };

/** Who had a request: its node, and every node it went to (a live set: hedges and failovers join it). */
export type ServedBy = ReplayNode & { tried?: ReadonlySet<string> };

export type ReplayPoolOptions = {
  /** Requests kept per model, the newest (default 64). */
  perModel?: number;
  /** Models kept, the most recently noted (default 256). */
  maxModels?: number;
  /** A request older than this is not replayed (default 10 minutes). */
  maxAgeMs?: number;
  /** Nodes one request is replayed to, at most (default 2). */
  maxReplays?: number;
  /** A request whose JSON is longer than this is not replayed (characters; default 65,536, as made canaries). */
  maxChars?: number;
};

type Kept = Replayable & { at: number; seenBy: Set<string>; tried?: ReadonlySet<string>; replays: number };

const DEFAULTS = {
  perModel: 64,
  maxModels: 256,
  maxAgeMs: 600_000,
  maxReplays: 2,
  maxChars: 65_536,
} satisfies Required<ReplayPoolOptions>;

export class ReplayPool {
  readonly #options: Required<ReplayPoolOptions>;
  readonly #models = new Map<string, Kept[]>();

  constructor(options: ReplayPoolOptions = {}) {
    this.#options = { ...DEFAULTS, ...options };
  }

  /** A client's request of `model`, as `servedBy` got it at `now` (ms). */
  note(model: string, job: Replayable, servedBy: ServedBy, now: number): void {
    let kept = this.#models.get(model);
    if (kept) this.#models.delete(model);
    else {
      kept = [];
      if (this.#models.size >= this.#options.maxModels)
        this.#models.delete(this.#models.keys().next().value!);
    }
    this.#models.set(model, kept);
    const { tried } = servedBy;
    kept.push({
      ...job,
      at: now,
      seenBy: new Set(keysOf(servedBy)),
      ...(tried ? { tried } : {}),
      replays: 0,
    });
    if (kept.length > this.#options.perModel) kept.shift();
  }

  /**
   * The newest request of `model` that `target` (and its owner's other nodes) never had, counted as
   * replayed to it; undefined when there is none. The newest, not one at random: an older job is a
   * tell to a node that has since seen its conversation go on (the classifier's repetition
   * features gave 0.60 at random, 0.51 newest first).
   */
  take(model: string, target: ReplayNode, now: number): Replayable | undefined {
    const kept = this.#models.get(model);
    if (!kept) return undefined;
    const fresh = kept.filter((k) => now - k.at <= this.#options.maxAgeMs);
    if (fresh.length !== kept.length) kept.splice(0, kept.length, ...fresh);
    const keys = keysOf(target);
    const open = fresh.filter((k) => !k.tried?.has(target.nodeId) && !keys.some((key) => k.seenBy.has(key)));
    for (let i = open.length - 1; i >= 0; i--) {
      const pick = open[i]!;
      if (JSON.stringify(pick.request).length > this.#options.maxChars) {
        kept.splice(kept.indexOf(pick), 1);
        continue;
      }
      for (const key of keys) pick.seenBy.add(key);
      if (++pick.replays >= this.#options.maxReplays) kept.splice(kept.indexOf(pick), 1);
      return { kind: pick.kind, stream: pick.stream, request: pick.request };
    }
    return undefined;
  }

  /** Requests kept for `model` (for tests and /metrics). */
  size(model: string): number {
    return this.#models.get(model)?.length ?? 0;
  }
}

function keysOf(node: ReplayNode): string[] {
  return node.owner ? [`node:${node.nodeId}`, `owner:${node.owner.toLowerCase()}`] : [`node:${node.nodeId}`];
}
