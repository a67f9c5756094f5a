// Test and benchmark helpers of @gpumesh/node (`@gpumesh/node/testing`): never used by the daemon's
// configuration, so a provider cannot offer the fixed-reply runtime by mistake.
export { createFixedReplyRuntime, type FixedReplyRuntimeOptions } from './runtimes/fixed-reply-runtime.js';
export {
  CoordinatorPeer,
  DEFAULT_PEER_HEARTBEAT_MS,
  type PeerSession,
} from './testing/coordinator-peer.js';
export {
  type FixedReplyNode,
  type FixedReplyNodeOptions,
  fixedReplyManifest,
  startFixedReplyNode,
  usdOffer,
} from './testing/fixed-reply-node.js';
export {
  SPAWNED_NODE_STOP_TIMEOUT_MS,
  type SpawnedNodeDaemon,
  type SpawnNodeDaemonOptions,
  spawnNodeDaemon,
} from './testing/spawn-node-daemon.js';
export { type LlamaDaemon, type LlamaDaemonOptions, startLlamaDaemon } from './testing/start-llama-daemon.js';
export { type NodeDaemon, type NodeDaemonOptions, startNodeDaemon } from './testing/start-node-daemon.js';
export {
  type OpenAiCompatibleServer,
  startOpenAiCompatibleServer,
} from './testing/start-openai-compatible-server.js';
