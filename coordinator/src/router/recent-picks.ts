/**
 * Each model's recent picks: which node took each of its last requests, so equal nodes share the
 * traffic (spread-equals.ts) and prefix affinity (prefer-prefix.ts) can stop sending one node more
 * than its share when prices are equal.
 */

/** Picks remembered per model. */
export const RECENT_PICKS = 50;
/** Fewer picks than this say nothing of a share yet: every node may be preferred. */
export const MIN_PICKS_FOR_SHARE = 3;

export class RecentPicks {
  readonly #byModel = new Map<string, { ring: string[]; next: number }>();

  /** Notes that `nodeId` took a request for `model`. */
  note(model: string, nodeId: string): void {
    let picks = this.#byModel.get(model);
    if (!picks) {
      picks = { ring: [], next: 0 };
      this.#byModel.set(model, picks);
    }
    if (picks.ring.length < RECENT_PICKS) picks.ring.push(nodeId);
    else picks.ring[picks.next] = nodeId;
    picks.next = (picks.next + 1) % RECENT_PICKS;
  }

  /** The node's share of the model's recent picks, 0..1; 0 while fewer than MIN_PICKS_FOR_SHARE. */
  shareOf(model: string, nodeId: string): number {
    const ring = this.#byModel.get(model)?.ring;
    if (!ring || ring.length < MIN_PICKS_FOR_SHARE) return 0;
    return this.countOf(model, nodeId) / ring.length;
  }

  /** How many of the model's recent picks the node took. */
  countOf(model: string, nodeId: string): number {
    const ring = this.#byModel.get(model)?.ring;
    let n = 0;
    if (ring) for (const id of ring) if (id === nodeId) n++;
    return n;
  }
}
