/**
 * The settings a flag or an environment variable may set (the rest come from the config file), as
 * a plain table with no imports: the CLI's argument parser reads it without loading the schema
 * (config.ts, which checks the table against NodeConfig's fields).
 */

/** One setting: its NodeConfig field, its flag, its environment variable and its value kind. */
export type SettingFlag = readonly [
  field: string,
  flag: string,
  env: string,
  kind: 'string' | 'integer' | 'boolean',
];

export const SETTING_FLAGS = [
  ['coordinator', 'coordinator', 'GPUMESH_COORDINATOR', 'string'],
  ['role', 'role', 'GPUMESH_NODE_ROLE', 'string'],
  ['stateDir', 'state-dir', 'GPUMESH_NODE_STATE_DIR', 'string'],
  ['modelsDir', 'models-dir', 'GPUMESH_NODE_MODELS_DIR', 'string'],
  ['runtime', 'runtime', 'GPUMESH_NODE_RUNTIME', 'string'],
  ['openaiUrl', 'openai-url', 'GPUMESH_NODE_OPENAI_URL', 'string'],
  ['openaiApiKey', 'openai-api-key', 'GPUMESH_NODE_OPENAI_API_KEY', 'string'],
  ['voicePhrases', 'voice-phrases', 'GPUMESH_NODE_VOICE_PHRASES', 'string'],
  ['pricePerAudioSecond', 'price-per-audio-second', 'GPUMESH_NODE_PRICE_PER_AUDIO_SECOND', 'string'],
  ['pricePerMChar', 'price-per-mchar', 'GPUMESH_NODE_PRICE_PER_MCHAR', 'string'],
  ['gpu', 'gpu', 'GPUMESH_NODE_GPU', 'string'],
  ['gpuLayers', 'gpu-layers', 'GPUMESH_NODE_GPU_LAYERS', 'string'],
  ['gpus', 'gpus', 'GPUMESH_NODE_GPUS', 'string'],
  ['threads', 'threads', 'GPUMESH_NODE_THREADS', 'integer'],
  ['maxConcurrency', 'max-concurrency', 'GPUMESH_NODE_MAX_CONCURRENCY', 'integer'],
  ['prefixCacheBytes', 'prefix-cache-bytes', 'GPUMESH_NODE_PREFIX_CACHE_BYTES', 'integer'],
  ['offerEmbeddings', 'offer-embeddings', 'GPUMESH_NODE_OFFER_EMBEDDINGS', 'boolean'],
  ['healthHost', 'health-host', 'GPUMESH_NODE_HEALTH_HOST', 'string'],
  ['healthPort', 'health-port', 'GPUMESH_NODE_HEALTH_PORT', 'integer'],
  ['ownerAddress', 'owner-address', 'GPUMESH_NODE_OWNER_ADDRESS', 'string'],
  ['ownerSignature', 'owner-signature', 'GPUMESH_NODE_OWNER_SIGNATURE', 'string'],
  ['reconnectMinMs', 'reconnect-min-ms', 'GPUMESH_NODE_RECONNECT_MIN_MS', 'integer'],
  ['reconnectMaxMs', 'reconnect-max-ms', 'GPUMESH_NODE_RECONNECT_MAX_MS', 'integer'],
  ['drainTimeoutMs', 'drain-timeout-ms', 'GPUMESH_NODE_DRAIN_TIMEOUT_MS', 'integer'],
  ['chunkFlushMs', 'chunk-flush-ms', 'GPUMESH_NODE_CHUNK_FLUSH_MS', 'integer'],
] as const satisfies readonly SettingFlag[];

/** The long flags the CLI accepts for settings, with their value kinds (for `parseArgs`). */
export const CONFIG_FLAGS = Object.fromEntries(
  SETTING_FLAGS.map(([, flag, , kind]) => [
    flag,
    { type: kind === 'boolean' ? ('boolean' as const) : ('string' as const) },
  ]),
);
