import type { Hub } from '../hub/hub.js';
import { unitOf } from '../router/build-catalog.js';
import type { NetworkNodeView } from './network-stats.js';

/**
 * The hub's nodes as the network stats and the nodes gauge see them: presence from the router's
 * index, tier and role from the session (or, for a node another replica holds, from its
 * announcement), and the models the node may be routed (after its tier's scopes) with their
 * advertised prices. `localOnly`: the nodes connected to this replica (the gauge, which replicas'
 * scrapes add up), not the whole network's (the pages).
 */
export function listHubNodes(hub: Hub, options: { localOnly?: boolean } = {}): NetworkNodeView[] {
  const views: NetworkNodeView[] = [];
  for (const node of hub.index.nodes()) {
    if (options.localOnly && node.via) continue;
    const session = hub.session(node.nodeId);
    views.push({
      nodeId: node.nodeId,
      state: node.state,
      role: session?.role ?? node.labels?.role ?? 'unknown',
      tier: session?.tier ?? node.labels?.tier ?? 'none',
      models: [...node.entries.values()].map((entry) => {
        const { offer } = entry;
        const unit = unitOf(entry);
        return {
          id: offer.modelId,
          family: offer.family,
          unit,
          price: {
            currency: offer.currency,
            // A transcription offer's price per million ms, shown per second.
            inputPerMTok: (unit === 'per_second' ? offer.priceIn / 1000n : offer.priceIn).toString(),
            outputPerMTok: offer.priceOut.toString(),
          },
        };
      }),
    });
  }
  return views;
}
