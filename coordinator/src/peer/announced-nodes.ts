import type { IndexedNode } from '../router/pick-index.js';

/**
 * What this replica last announced of each node it holds, so that between whole lists an
 * announcement carries only the nodes that changed — came, went, changed state or load, or were
 * indexed again (a new manifest makes a new IndexedNode) — and the ids of those that left.
 */
export class AnnouncedNodes {
  readonly #last = new Map<string, { node: IndexedNode; state: string; load: number }>();

  /** Records `local` as announced now; returns what changed since the last call. */
  update(local: readonly IndexedNode[]): { changed: IndexedNode[]; removed: string[] } {
    const changed: IndexedNode[] = [];
    const seen = new Set<string>();
    for (const node of local) {
      seen.add(node.nodeId);
      const last = this.#last.get(node.nodeId);
      if (last && last.node === node && last.state === node.state && last.load === node.reportedLoad)
        continue;
      changed.push(node);
      this.#last.set(node.nodeId, { node, state: node.state, load: node.reportedLoad });
    }
    const removed: string[] = [];
    for (const nodeId of this.#last.keys()) {
      if (seen.has(nodeId)) continue;
      removed.push(nodeId);
      this.#last.delete(nodeId);
    }
    return { changed, removed };
  }
}
