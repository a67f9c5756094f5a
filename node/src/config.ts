import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DEFAULT_CHUNK_FLUSH_MS } from './chunk-flush.js';
import { SETTING_FLAGS, type SettingFlag } from './config-flags.js';
import { NodeError } from './errors.js';

/** The settings' flags for `parseArgs`; defined beside their table so the CLI parses without the schema. */
export { CONFIG_FLAGS } from './config-flags.js';

export const DEFAULT_COORDINATOR_URL = 'http://127.0.0.1:8080';
/** The node hub's path on a coordinator given by its app URL (http/https). */
export const DEFAULT_NODE_HUB_PATH = '/node';
export const DEFAULT_STATE_DIR = join(homedir(), '.gpumesh-node');
export const DEFAULT_HEALTH_PORT = 9469;
export const DEFAULT_MAX_CONCURRENCY = 2;
/** $0.10 and $0.20 per million tokens, in nanousd. */
export const DEFAULT_INPUT_PRICE_PER_MTOK = '100000000';
export const DEFAULT_OUTPUT_PRICE_PER_MTOK = '200000000';
/**
 * A cached prompt token's price, as a percentage of the input price, when the price names none
 * (NODE_PROTOCOL.md §9 "Prefix cache"): 10 %, what Anthropic (cache reads), DeepSeek and OpenAI's
 * current models charge (older OpenAI and Gemini models 25–50 %). A cached token costs the node
 * memory, not compute: its prefill was paid for when the prefix was first sent.
 */
export const DEFAULT_CACHED_INPUT_PERCENT = 10n;
/** Voice prices, nanousd: $0.006 per minute of audio transcribed (0.0001 $/s), $1 per million characters spoken. */
export const DEFAULT_PRICE_PER_AUDIO_SECOND = '100000';
export const DEFAULT_PRICE_PER_MCHAR = '1000000000';
export const DEFAULT_RECONNECT_MIN_MS = 500;
export const DEFAULT_RECONNECT_MAX_MS = 30_000;
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

const Price = Type.Object({
  currency: Type.Union([Type.Literal('USD'), Type.Literal('NATIVE')]),
  inputPerMTok: Type.String({ pattern: '^(0|[1-9][0-9]*)$' }),
  outputPerMTok: Type.String({ pattern: '^(0|[1-9][0-9]*)$' }),
  /** Chat models that cache prefixes: a cached prompt token's price, ≤ inputPerMTok (default 10 % of it). */
  cachedInputPerMTok: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]*)$' })),
});

/** Per-model settings from the config file, matched by file name (llama) or id (openai). */
const ModelSetting = Type.Object({
  file: Type.Optional(Type.String({ minLength: 1 })),
  id: Type.String({ minLength: 1, maxLength: 256 }),
  upstream: Type.Optional(Type.String({ minLength: 1 })),
  family: Type.Optional(
    Type.Union([
      Type.Literal('chat'),
      Type.Literal('text'),
      Type.Literal('embedding'),
      Type.Literal('vision'),
      Type.Literal('voice'),
    ]),
  ),
  /** Voice models relayed to an OpenAI-compatible server: the voice jobs they serve. */
  kinds: Type.Optional(
    Type.Array(
      Type.Union([Type.Literal('transcription'), Type.Literal('translation'), Type.Literal('speech')]),
      {
        minItems: 1,
        maxItems: 3,
      },
    ),
  ),
  embeddingId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  maxConcurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
  contextLength: Type.Optional(Type.Integer({ minimum: 16 })),
  price: Type.Optional(Price),
});

export const NodeConfigSchema = Type.Object({
  /**
   * The coordinator: its app URL (http/https, hub at {@link DEFAULT_NODE_HUB_PATH}) or the hub's
   * ws/wss URL; or several, comma-separated (one per replica), tried in turn on each reconnect.
   */
  coordinator: Type.String({ pattern: '^(https?|wss?)://[^,\\s]+(\\s*,\\s*(https?|wss?)://[^,\\s]+)*$' }),
  role: Type.Union([Type.Literal('gpu'), Type.Literal('cpu'), Type.Literal('network')]),
  /** Holds the node key (`node.key`, 0600). Kept across upgrades. */
  stateDir: Type.String({ minLength: 1 }),
  modelsDir: Type.String({ minLength: 1 }),
  /** `llama` (GGUF files in process), `openai` (relay to a local server), `voice` (espeak-ng + pocketsphinx). */
  runtime: Type.Union([Type.Literal('llama'), Type.Literal('openai'), Type.Literal('voice')]),
  /**
   * Runtime `voice`: phrases the recognizer is confined to, separated by `|` (a JSGF grammar;
   * every word must be in the pocketsphinx dictionary). Unset: its general language model.
   */
  voicePhrases: Type.Optional(Type.String({ minLength: 1, maxLength: 65_536 })),
  /** Voice models' prices, in the currency of `price`: per second of audio in, per million characters spoken. */
  pricePerAudioSecond: Type.String({ pattern: '^(0|[1-9][0-9]*)$' }),
  pricePerMChar: Type.String({ pattern: '^(0|[1-9][0-9]*)$' }),
  /** The OpenAI-compatible server's base URL, for runtime `openai`. */
  openaiUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  openaiApiKey: Type.Optional(Type.String()),
  gpu: Type.Union([Type.Literal('auto'), Type.Literal('cpu')]),
  /**
   * Model layers offloaded to the GPU: `auto` (node-llama-cpp fits as many as free VRAM allows),
   * `max` (all), or a count (0: none).
   */
  gpuLayers: Type.String({ pattern: '^(auto|max|[0-9]{1,4})$' }),
  /** Which GPUs to use, by index (`0,1`); default all. */
  gpus: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}(,[0-9]{1,2}){0,31}$' })),
  /** Threads per model context; default depends on the core count. */
  threads: Type.Optional(Type.Integer({ minimum: 1, maximum: 512 })),
  /** Jobs at once per model; unset: sized from free VRAM on a GPU, {@link DEFAULT_MAX_CONCURRENCY} on the CPU. */
  maxConcurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
  /**
   * Bytes per chat model for the KV state of recent conversations beyond the concurrent jobs'
   * sequences (the prefix cache, at most 4 more sequences); unset: an eighth of the memory free
   * after the model loads (VRAM on a GPU, RAM on the CPU); 0: none beyond the job sequences.
   */
  prefixCacheBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Also offer each decoder model's embeddings, as `<id>-embed`. */
  offerEmbeddings: Type.Boolean(),
  price: Price,
  models: Type.Array(ModelSetting),
  healthHost: Type.String(),
  /** 0: any free port. */
  healthPort: Type.Integer({ minimum: 0, maximum: 65535 }),
  /** The owner wallet and its signature of `ownerProofText(nodeId)` (see `gpumesh-node id`). */
  ownerAddress: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })),
  ownerSignature: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{130}$' })),
  reconnectMinMs: Type.Integer({ minimum: 1 }),
  reconnectMaxMs: Type.Integer({ minimum: 1 }),
  drainTimeoutMs: Type.Integer({ minimum: 0 }),
  /** Longest streamed text waits to share a chunk frame with later tokens; 0: a frame per token. */
  chunkFlushMs: Type.Integer({ minimum: 0, maximum: 1000 }),
});

export type NodeConfig = Readonly<Static<typeof NodeConfigSchema>>;
export type ModelSetting = Static<typeof ModelSetting>;

type Field = keyof Static<typeof NodeConfigSchema>;
type Kind = SettingFlag[3];

/** The flag table, checked against the schema: every setting it names is a field of NodeConfig. */
const SCALARS: readonly (readonly [field: Field, flag: string, env: string, kind: Kind])[] = SETTING_FLAGS;

export type LoadConfigOptions = {
  /** Parsed CLI flags (`parseArgs` values), keyed by flag name. */
  flags?: Record<string, string | boolean | undefined>;
  env?: NodeJS.ProcessEnv;
  /** A JSON config file; default `$GPUMESH_NODE_CONFIG`, else `<stateDir>/config.json` when present. */
  configFile?: string;
};

/**
 * The daemon's configuration: flags > environment > config file > defaults, validated once and
 * frozen. Relative paths resolve against the working directory.
 * @throws NodeError `config_invalid` naming the first bad setting.
 */
export function loadConfig(options: LoadConfigOptions = {}): NodeConfig {
  const env = options.env ?? process.env;
  const flags = options.flags ?? {};
  const fromFlagsAndEnv: Partial<Record<Field, unknown>> = {};
  for (const [field, flag, variable, kind] of SCALARS) {
    const raw = flags[flag] ?? env[variable];
    if (raw !== undefined && raw !== '') fromFlagsAndEnv[field] = convert(raw, kind, flag);
  }
  const stateDirGuess = String(fromFlagsAndEnv.stateDir ?? DEFAULT_STATE_DIR);
  const file = options.configFile ?? (flags.config as string | undefined) ?? env.GPUMESH_NODE_CONFIG;
  const fromFile = readConfigFile(file, join(stateDirGuess, 'config.json'));
  const stateDir = resolve(String(fromFlagsAndEnv.stateDir ?? fromFile.stateDir ?? DEFAULT_STATE_DIR));
  const merged = {
    coordinator: DEFAULT_COORDINATOR_URL,
    role: 'cpu',
    runtime: 'llama',
    gpu: 'auto',
    gpuLayers: 'auto',
    offerEmbeddings: false,
    price: {
      currency: 'USD',
      inputPerMTok: DEFAULT_INPUT_PRICE_PER_MTOK,
      outputPerMTok: DEFAULT_OUTPUT_PRICE_PER_MTOK,
    },
    pricePerAudioSecond: DEFAULT_PRICE_PER_AUDIO_SECOND,
    pricePerMChar: DEFAULT_PRICE_PER_MCHAR,
    models: [],
    healthHost: '127.0.0.1',
    healthPort: DEFAULT_HEALTH_PORT,
    reconnectMinMs: DEFAULT_RECONNECT_MIN_MS,
    reconnectMaxMs: DEFAULT_RECONNECT_MAX_MS,
    drainTimeoutMs: DEFAULT_DRAIN_TIMEOUT_MS,
    chunkFlushMs: DEFAULT_CHUNK_FLUSH_MS,
    ...fromFile,
    ...fromFlagsAndEnv,
    stateDir,
  } as Record<string, unknown>;
  merged.modelsDir = resolve(String(merged.modelsDir ?? join(stateDir, 'models')));
  if (!Value.Check(NodeConfigSchema, merged)) {
    const first = Value.Errors(NodeConfigSchema, merged).First();
    throw new NodeError('config_invalid', { detail: first ? `${first.path}: ${first.message}` : undefined });
  }
  if ((merged.ownerAddress === undefined) !== (merged.ownerSignature === undefined)) {
    throw new NodeError('config_invalid', { detail: 'ownerAddress and ownerSignature go together.' });
  }
  const prices = [merged.price, ...(merged.models as ModelSetting[]).map((model) => model.price)];
  for (const price of prices as (Static<typeof Price> | undefined)[]) {
    if (
      price?.cachedInputPerMTok !== undefined &&
      BigInt(price.cachedInputPerMTok) > BigInt(price.inputPerMTok)
    ) {
      throw new NodeError('config_invalid', {
        detail: 'price.cachedInputPerMTok must be at most inputPerMTok.',
      });
    }
  }
  if (merged.runtime === 'openai' && !merged.openaiUrl) {
    throw new NodeError('config_invalid', { detail: 'runtime openai needs openaiUrl.' });
  }
  return deepFreeze(merged) as NodeConfig;
}

/** The hubs' WebSocket URLs for a configured coordinator (one URL, or several comma-separated). */
export function hubUrls(coordinator: string): string[] {
  return coordinator
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map(hubUrl);
}

/** The hub's WebSocket URL for a configured coordinator URL. */
export function hubUrl(coordinator: string): string {
  const url = new URL(coordinator);
  if (url.protocol === 'ws:' || url.protocol === 'wss:') return url.toString();
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (url.pathname === '/' || url.pathname === '') url.pathname = DEFAULT_NODE_HUB_PATH;
  return url.toString();
}

function convert(raw: string | boolean, kind: Kind, flag: string): unknown {
  if (kind === 'boolean') return raw === true || raw === 'true' || raw === '1';
  if (kind === 'integer') {
    const value = Number(raw);
    if (!Number.isInteger(value))
      throw new NodeError('config_invalid', { detail: `--${flag}: ${raw} is not an integer.` });
    return value;
  }
  return raw;
}

function readConfigFile(explicit: string | undefined, fallback: string): Record<string, unknown> {
  const path = explicit ?? fallback;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (explicit === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new NodeError('config_invalid', { detail: `Cannot read ${path}.`, cause: error });
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw new NodeError('config_invalid', { detail: `${path} is not a JSON object.`, cause: error });
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
