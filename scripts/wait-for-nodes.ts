import type { LocalNode } from './start-local-node.js';

/**
 * A node that shows no progress (no output, no new stage) this long while not yet online has
 * stalled: npm start stops and shows its last lines. Load is not failure: a slow machine stretches
 * each step, and any output counts as progress.
 */
const NODE_STALL_MS = 300_000;
/** Quick deaths in a row after which a node is failing, not starting. */
const NODE_MAX_QUICK_DEATHS = 5;
const POLL_MS = 200;

/**
 * Until every node answers its health check: as long as each shows progress (output, a new stage),
 * or up to `timeoutMs` when given. A node that stalls or keeps dying fails the start with its last
 * lines.
 */
export async function waitForNodes(nodes: LocalNode[], timeoutMs: number | undefined): Promise<void> {
  const started = Date.now();
  for (;;) {
    const healthy = await Promise.all(nodes.map((n) => isHealthy(n.healthUrl)));
    if (healthy.every(Boolean)) return;
    const now = Date.now();
    for (const [i, node] of nodes.entries()) {
      if (healthy[i]) continue;
      const { stage, at, lines, quickDeaths } = node.progress;
      const why =
        quickDeaths >= NODE_MAX_QUICK_DEATHS
          ? `node ${node.index} exited ${quickDeaths} times in a row while starting`
          : now - at > NODE_STALL_MS
            ? `node ${node.index} made no progress for ${Math.round((now - at) / 1000)} s (last: ${stage})`
            : timeoutMs !== undefined && now - started > timeoutMs
              ? `node ${node.index} was not online after --wait-timeout ${Math.round(timeoutMs / 1000)} s (last: ${stage})`
              : undefined;
      if (why) throw new Error(`${why}; its last lines:\n${lines.join('\n') || '(none)'}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function isHealthy(url: string): Promise<boolean> {
  const response = await fetch(url).catch(() => undefined);
  return response?.status === 200;
}
