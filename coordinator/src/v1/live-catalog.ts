import { buildCatalog, type CatalogModel } from '../router/build-catalog.js';
import type { PickIndex } from '../router/pick-index.js';

/** What the catalog's verified counts need of trust (trust/standing/standings.ts's Standings is one). */
export type Standings = { readonly version: number; trusted(nodeId: string): boolean };

/**
 * The catalog of live models (router/build-catalog.ts) as /v1/models and /api/router/models serve
 * it: built again only when the pick index or the nodes' standings changed since the last build
 * (their versions), not per request — its cost grows with the node list (~40 ms at 10,000 nodes
 * here, bench/network-sim.ts). Loads and latencies, which change with every job, are not in it.
 */
export function liveCatalog(
  index: PickIndex,
  nativeUsdPriceNano: bigint,
  standings: Standings | undefined,
): () => readonly CatalogModel[] {
  let built: { index: number; standings: number; models: readonly CatalogModel[] } | undefined;
  return () => {
    const standingsVersion = standings?.version ?? 0;
    if (built?.index !== index.version || built.standings !== standingsVersion) {
      const models = buildCatalog(
        index,
        nativeUsdPriceNano,
        standings ? (nodeId) => standings.trusted(nodeId) : undefined,
      );
      built = { index: index.version, standings: standingsVersion, models };
    }
    return built.models;
  };
}
