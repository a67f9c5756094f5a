/**
 * Probation: a node not yet trusted (fewer than `trust.passesToTrust` passed verifications) takes
 * at most `trust.probationShare` of a model's recent requests while a trusted node could take
 * them: once over its share it is moved behind the trusted candidates (never removed, so a model
 * served only by new nodes still works). A cheap liar therefore earns at most its share until
 * canaries suspend it. The standings live here in memory, loaded when a node connects and
 * updated by every verification.
 */

import { TRUST_STATUS, type TrustStatus } from '../../db/tables/trust.js';
import type { Entry } from '../../router/pick-index.js';

/** How many of a model's latest routed requests the share is measured over. */
export const PROBATION_WINDOW = 100;

export class Probation {
  readonly #share: number;
  readonly #status = new Map<string, TrustStatus>();
  readonly #recent = new Map<string, string[]>();

  constructor(share: number) {
    this.#share = share;
  }

  /** Bumped whenever a standing changes (what depends on them, such as the catalog, can tell). */
  version = 0;

  /** A node's standing (lowercase id); unknown nodes are on probation. */
  set(nodeId: string, status: TrustStatus): void {
    const id = nodeId.toLowerCase();
    if (this.#status.get(id) === status) return;
    this.#status.set(id, status);
    this.version++;
  }

  trusted(nodeId: string): boolean {
    return this.#status.get(nodeId.toLowerCase()) === TRUST_STATUS.trusted;
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
