/**
 * The coordinator's one configuration: defaults < JSON file < environment (GPUMESH_*) < flags.
 *
 * Every field is described once, in `CoordinatorConfigSchema` (TypeBox), with its default. The
 * environment and flag names are derived from the field path, so a field added here is settable
 * everywhere without another table: `chain.rpcUrl` ← `GPUMESH_CHAIN_RPC_URL` ← `--chain-rpc-url`.
 * Object-valued fields (e.g. `chain.tokens`) take JSON in the environment and in flags.
 * `DATABASE_URL` and `REDIS_URL` are also read, as the issue names them, below their GPUMESH_ forms.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { CoordinatorConfigSchema } from './config-schema.js';
import { ApiError } from './errors.js';

export * from './config-schema.js';

type ConfigInput = Static<typeof CoordinatorConfigSchema>;

/** The validated, frozen configuration; publicUrl and routerUrl are always resolved. */
export type CoordinatorConfig = DeepReadonly<ConfigInput & { publicUrl: string; routerUrl: string }>;

type DeepReadonly<T> = T extends bigint | string | number | boolean | undefined
  ? T
  : T extends readonly (infer U)[]
    ? readonly DeepReadonly<U>[]
    : { readonly [K in keyof T]: DeepReadonly<T[K]> };

export type LoadConfigOptions = {
  /** Command-line flags (`--port 9000`, `--chain-rpc-url=http://…`); default none. */
  argv?: readonly string[];
  /** Environment; default none (only server.ts passes process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Path of a JSON config file; default none (or `--config` / GPUMESH_CONFIG). */
  file?: string;
  /** Values set in code (tests); they win over everything else. */
  overrides?: Record<string, unknown>;
};

/** Loads, merges, validates and freezes the configuration. Throws ApiError('invalid_config'). */
export function loadConfig(options: LoadConfigOptions = {}): CoordinatorConfig {
  const env = options.env ?? {};
  const flags = parseFlags(options.argv ?? []);
  const filePath = (flags.config as string | undefined) ?? env.GPUMESH_CONFIG ?? options.file;
  const fromFile = filePath ? readJsonFile(filePath) : {};
  const fromEnv: Record<string, unknown> = {};
  if (env.DATABASE_URL) fromEnv.databaseUrl = env.DATABASE_URL;
  if (env.REDIS_URL) fromEnv.redisUrl = env.REDIS_URL;
  const fromFlags: Record<string, unknown> = {};
  for (const leaf of leaves(CoordinatorConfigSchema)) {
    const envValue = env[`GPUMESH_${leaf.path.map(snake).join('_')}`];
    if (envValue !== undefined && envValue !== '')
      setPath(fromEnv, leaf.path, parseRaw(envValue, leaf.schema));
    const flagValue = flags[leaf.path.map(kebab).join('-')];
    if (flagValue !== undefined) setPath(fromFlags, leaf.path, parseRaw(String(flagValue), leaf.schema));
  }
  const merged = deepMerge(deepMerge(deepMerge(fromFile, fromEnv), fromFlags), options.overrides ?? {});
  const withDefaults = Value.Default(CoordinatorConfigSchema, Value.Convert(CoordinatorConfigSchema, merged));
  const first = Value.Errors(CoordinatorConfigSchema, withDefaults).First();
  if (first) {
    const where = first.path.replace(/^\//, '').replaceAll('/', '.') || '(root)';
    throw new ApiError('invalid_config', `configuration ${where}: ${first.message}`, { param: where });
  }
  const config = withDefaults as ConfigInput;
  checkPeer(config);
  checkMedia(config);
  checkDevWallets(config);
  const publicUrl = stripSlash(config.publicUrl ?? `http://${config.host}:${config.port}`);
  const routerUrl = stripSlash(config.routerUrl ?? publicUrl);
  return deepFreeze({ ...config, dataDir: path.resolve(config.dataDir), publicUrl, routerUrl });
}

/** Dev wallets sign in without a signature: only beside a chain on this machine. */
function checkDevWallets(config: ConfigInput): void {
  if (!config.devWallets?.length) return;
  const host = config.chain.rpcUrl ? new URL(config.chain.rpcUrl).hostname : '';
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) {
    throw new ApiError(
      'invalid_config',
      'configuration devWallets: dev wallets sign in without a wallet, so only beside a chain on this machine (chain.rpcUrl on 127.0.0.1).',
      { param: 'devWallets' },
    );
  }
}

/** Room a job frame needs beside its base64 media (the JSON around it, the other fields). */
const MEDIA_FRAME_OVERHEAD_BYTES = 64 * 1024;

/**
 * Media travels as base64 inside one job frame (NODE_PROTOCOL.md §9 "Media bytes"): the audio and
 * image limits must fit router.maxFrameBytes, or every request near a limit would fail at the node.
 */
function checkMedia(config: ConfigInput): void {
  const frame = config.router.maxFrameBytes;
  for (const field of ['maxAudioBytes', 'maxImageBytes'] as const) {
    const needed = Math.ceil((config.media[field] * 4) / 3) + MEDIA_FRAME_OVERHEAD_BYTES;
    if (needed > frame) {
      throw new ApiError(
        'invalid_config',
        `configuration media.${field}: ${config.media[field]} bytes are ${needed} in a job frame (base64), over router.maxFrameBytes ${frame}`,
        { param: `media.${field}` },
      );
    }
  }
}

/** Settings that only make sense together: replicas need the shared stores, TLS its three files. */
function checkPeer(config: ConfigInput): void {
  const { peer } = config;
  if (peer.port !== undefined && (!config.databaseUrl || !config.redisUrl)) {
    throw new ApiError(
      'invalid_config',
      'configuration peer.port: replicas need databaseUrl (PostgreSQL, the shared ledger) and redisUrl',
      { param: 'peer.port' },
    );
  }
  const tls = [peer.tlsCert, peer.tlsKey, peer.tlsCa];
  if (tls.some((file) => file !== undefined) && tls.some((file) => file === undefined)) {
    throw new ApiError(
      'invalid_config',
      'configuration peer.tlsCert: set tlsCert, tlsKey and tlsCa together',
      {
        param: 'peer.tlsCert',
      },
    );
  }
}

function parseFlags(argv: readonly string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) {
      out[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        out[arg.slice(2)] = next;
        i++;
      } else {
        out[arg.slice(2)] = true;
      }
    }
  }
  return out;
}

type Leaf = { path: string[]; schema: TSchema };

/** Every settable field: object-typed fields with fixed properties recurse, the rest are leaves. */
function leaves(schema: TSchema, prefix: string[] = []): Leaf[] {
  const props = (schema as { properties?: Record<string, TSchema> }).properties;
  if (schema.type === 'object' && props) {
    return Object.entries(props).flatMap(([key, sub]) => leaves(sub, [...prefix, key]));
  }
  return [{ path: prefix, schema }];
}

function parseRaw(raw: string, schema: TSchema): unknown {
  if (schema.type === 'object' || schema.type === 'array') {
    try {
      return JSON.parse(raw);
    } catch {
      throw new ApiError('invalid_config', `configuration value is not JSON: ${raw.slice(0, 40)}`);
    }
  }
  return raw; // Value.Convert coerces numbers, booleans and bigints from strings.
}

function readJsonFile(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new ApiError('invalid_config', `cannot read config file ${file}`, { cause: error });
  }
}

const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
const kebab = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
const stripSlash = (s: string) => s.replace(/\/+$/, '');

function setPath(target: Record<string, unknown>, keys: string[], value: unknown): void {
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isPlainObject(value) && isPlainObject(out[key]) ? deepMerge(out[key], value) : value;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
