/**
 * `@gpumesh/protocol/conformance`: the conformance kit as a library, and the reference peers.
 * `runNodeConformance` plays the coordinator against a node; `runCoordinatorConformance` plays a
 * node against a coordinator. The CLI (`gpumesh-conformance`) is a thin wrapper around these.
 */

export { NODE_SCENARIO_NAMES, NODE_SCENARIOS } from './node/nodeScenarios.js';
export { type NodeConformanceOptions, runNodeConformance } from './node/runNodeConformance.js';
export {
  REFERENCE_CHAT_MODEL,
  REFERENCE_EMBEDDING_MODEL,
  referenceManifest,
} from './reference/referenceManifest.js';
export {
  type ReferenceNode,
  type ReferenceNodeOptions,
  startReferenceNode,
} from './reference/referenceNode.js';
export { type ConformanceReport, formatReport, type ScenarioResult } from './report.js';
