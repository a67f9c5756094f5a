/**
 * Probation: a node not yet trusted (fewer than `trust.passesToTrust` passed verifications) takes
 * at most `trust.probationShare` of a model's recent requests while a trusted node could take
 * them: once over its share it is moved behind the trusted candidates (never removed, so a model
 * served only by new nodes still works). A cheap liar therefore earns at most its share until
 * canaries suspend it. Who is trusted it reads from the nodes' standings (standings.ts).
 */

import type { Entry } from '../../router/pick-index.js';
import type { Standings } from './standings.js';

/** How many of a model's latest routed requests the share is measured over. */
export const PROBATION_WINDOW = 100;

export class Probation {
  readonly #share: number;
  readonly #standings: Standings;
  readonly #recent = new Map<string, string[]>();

  constructor(share: number, standings: Standings) {
    this.#share = share;
    this.#standings = standings;
  }

  trusted(nodeId: string): boolean {
    return this.#standings.trusted(nodeId);
  }

  /** Share of the model's recent requests this node took, 0…1. */
  shareOf(model: string, nodeId: string): number {
    const recent = this.#recent.get(model);
    if (!recent || recent.length === 0) return 0;
    const id = nodeId.toLowerCase();
    return recent.filter((x) => x === id).length / recent.length;
  }

  /**
   * The candidates in routing order, except that a node on probation at or over its share goes
   * behind every trusted candidate. Unchanged when no candidate is trusted.
   */
  order(model: string, candidates: readonly Entry[]): readonly Entry[] {
    if (!candidates.some((e) => this.trusted(e.node.nodeId))) return candidates;
    const held: Entry[] = [];
    const first: Entry[] = [];
    for (const e of candidates) {
      const over = !this.trusted(e.node.nodeId) && this.shareOf(model, e.node.nodeId) >= this.#share;
      (over ? held : first).push(e);
    }
    return held.length === 0 ? candidates : [...first, ...held];
  }

  /** A request of `model` went to `nodeId`. */
  note(model: string, nodeId: string): void {
    let recent = this.#recent.get(model);
    if (!recent) {
      recent = [];
      this.#recent.set(model, recent);
    }
    recent.push(nodeId.toLowerCase());
    if (recent.length > PROBATION_WINDOW) recent.shift();
  }
}
