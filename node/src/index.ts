// Public surface of @gpumesh/node: the daemon, its parts, and the generated test model.

export {
  buildTinyModel,
  DEFAULT_TINY_MODEL_CONTEXT_TOKENS,
  DEFAULT_TINY_MODEL_NAME,
  DEFAULT_TINY_MODEL_SEED,
  type TinyModelOptions,
} from '@gpumesh/protocol/conformance';
export {
  CONFIG_FLAGS,
  hubUrl,
  hubUrls,
  type LoadConfigOptions,
  loadConfig,
  type NodeConfig,
} from './config.js';
export { type Daemon, nodeKeyPath, type StartDaemonOptions, startDaemon } from './daemon.js';
export { type DoctorCheck, runDoctor } from './doctor.js';
export { NODE_ERRORS, NodeError, type NodeErrorCode } from './errors.js';
export { type Backend, detectHardware, type Gpu, type Hardware } from './hardware/detect-hardware.js';
export { type HardwareSource, systemHardwareSource } from './hardware/hardware-source.js';
export { type HealthServer, type HealthStatus, startHealthServer } from './health.js';
export { HubClient } from './hub-client.js';
export { HUB_STATES, type HubClientOptions, type HubState } from './hub-client-options.js';
export { loadNodeIdentity, type NodeIdentity } from './identity.js';
export { buildManifest } from './manifest.js';
export { type PullOptions, type PullResult, pullModel } from './models/pull-model.js';
export { tinyModelPath } from './models/tiny-model-path.js';
export { type WriteTinyModelOptions, writeTinyModel } from './models/write-tiny-model.js';
export { createRuntime } from './runtimes/create-runtime.js';
export {
  createLlamaRuntime,
  defaultThreads,
  type LlamaModelSpec,
  type LlamaRuntimeOptions,
} from './runtimes/llama/llama-runtime.js';
export { type LocalModel, listLocalModels } from './runtimes/local-models.js';
export {
  createOpenAiRuntime,
  type OpenAiRuntimeOptions,
  type RelayedModel,
} from './runtimes/openai/openai-runtime.js';
export type {
  JobKind,
  JobResponse,
  LoadProgress,
  ModelFamily,
  Runtime,
  RuntimeJob,
  ServedModel,
} from './runtimes/runtime.js';
export {
  createVoiceRuntime,
  ESPEAK_MODEL_ID,
  POCKETSPHINX_MODEL_ID,
  type VoiceRuntimeOptions,
} from './runtimes/voice/voice-runtime.js';
