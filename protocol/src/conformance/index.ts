/**
 * `@gpumesh/protocol/conformance`: the conformance kit as a library, the reference peers and the
 * kit's generated models. `runNodeConformance` plays the coordinator against a node;
 * `runCoordinatorConformance` plays a node against a coordinator; `buildKitModel` is the model the
 * `verify` scenarios score on (NODE_PROTOCOL.md §13), `buildTinyModel` the generator behind it.
 * The CLI (`gpumesh-conformance`) is a thin wrapper around these. protocol/README.md lists every
 * export, and a test keeps that list in sync.
 */

export {
  buildTinyModel,
  DEFAULT_TINY_MODEL_CONTEXT_TOKENS,
  DEFAULT_TINY_MODEL_NAME,
  DEFAULT_TINY_MODEL_SEED,
  type TinyModelOptions,
} from '../kit-model/build-tiny-model.js';
export {
  buildKitModel,
  KIT_MODEL_FILE,
  KIT_MODEL_OPTIONS,
  KIT_MODEL_SHA256,
} from '../kit-model/kit-model.js';
export type { InferenceRequest, TriggerInference } from './coordinator/context.js';
export { COORDINATOR_SCENARIO_NAMES, COORDINATOR_SCENARIOS } from './coordinator/coordinator-scenarios.js';
export {
  type CoordinatorConformanceOptions,
  runCoordinatorConformance,
} from './coordinator/run-coordinator-conformance.js';
export { NODE_SCENARIO_NAMES, NODE_SCENARIOS } from './node/node-scenarios.js';
export { type NodeConformanceOptions, runNodeConformance } from './node/run-node-conformance.js';
export {
  type SampledAnswer,
  type SampledTolerance,
  sampledMismatch,
  VERIFY_VECTORS_URL,
  type VerifyVectorCase,
  type VerifyVectors,
  verificationMismatch,
  verifyVectors,
} from './node/verify-vectors.js';
export { openAiTrigger } from './open-ai-trigger.js';
export {
  type ReferenceCoordinator,
  type ReferenceCoordinatorOptions,
  startReferenceCoordinator,
} from './reference/reference-coordinator.js';
export {
  REFERENCE_CHAT_MODEL,
  REFERENCE_EMBEDDING_MODEL,
  referenceManifest,
} from './reference/reference-manifest.js';
export {
  REFERENCE_MEDIA_MODELS,
  REFERENCE_SPEECH_MODEL,
  REFERENCE_TRANSCRIPTION_MODEL,
  REFERENCE_VISION_MODEL,
} from './reference/reference-media.js';
export {
  type ReferenceNode,
  type ReferenceNodeOptions,
  startReferenceNode,
} from './reference/reference-node.js';
export { type ConformanceReport, formatReport, type ScenarioResult } from './report.js';
