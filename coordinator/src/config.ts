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
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DEFAULT_NATIVE_SYMBOL } from './chain/constants.js';
import { ApiError } from './errors.js';
import { NANOUSD_PER_USD } from './ledger/money.js';
import { DEFAULT_QUEUE_DEPTH, DEFAULT_QUEUE_WAIT_MS } from './router/wait-queue.js';

export { DEFAULT_NATIVE_SYMBOL };

export const DEFAULT_HOST = '127.0.0.1';
/** Every 5 minutes per node, on average. */
export const DEFAULT_CANARY_INTERVAL_MS = 300_000;
/** Share of live completions spot-checked by default (issue 29: on, small; each costs a verify job). */
export const DEFAULT_SPOT_CHECK_RATE = 0.02;
export const DEFAULT_PAYOUT_MIN_NANO = NANOUSD_PER_USD / 100n;
export const DEFAULT_PAYOUT_DAILY_CAP_NANO = 1_000n * NANOUSD_PER_USD;
/** Above the receipt wait (30 s), so a payout still waiting for its receipt is left alone. */
export const DEFAULT_PAYOUT_SETTLE_AFTER_MS = 60_000;
export const DEFAULT_PORT = 8080;
export const DEFAULT_DATA_DIR = './.gpumesh';
export const DEFAULT_LOG_LEVEL = 'info';
export const DEFAULT_JWT_TTL_S = 7 * 24 * 60 * 60;
export const DEFAULT_NONCE_TTL_MS = 10 * 60 * 1000;
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
/** Deepest nesting of objects/arrays a JSON body may have (OpenAI bodies need < 10). */
export const DEFAULT_BODY_MAX_DEPTH = 64;
export const DEFAULT_RATE_LIMIT_WINDOW_MS = 60_000;
/** Per IP, per window, on GET /api/auth/nonce and POST /api/auth/verify. */
export const DEFAULT_RATE_LIMIT_SIGN_IN_MAX = 30;
/** Per signed-in user (JWT) or per API key, per window, on every other route. */
export const DEFAULT_RATE_LIMIT_USER_MAX = 600;
/** Per IP, per window, on other routes called without a credential. */
export const DEFAULT_RATE_LIMIT_ANONYMOUS_MAX = 300;
/**
 * Per IP, per window: failed credentials (401 to a request with an Authorization header) before
 * every credentialed request from that IP is 429 until the window ends. Checked before any
 * credential is verified, so a flood of random sk- keys or bad JWTs costs no hash or lookup.
 */
export const DEFAULT_RATE_LIMIT_FAILED_CREDENTIAL_MAX = 60;
export const DEFAULT_RATE_LIMIT_NAMESPACE = 'gpumesh-rl:';
export const DEFAULT_MAX_ACTIVE_KEYS = 10;
export const DEFAULT_CHAIN_ID = 800_000;
export const DEFAULT_GAS_PRICE_WEI = 150_000_000_000n;
export const DEFAULT_CONFIRMATIONS = 1;
export const DEFAULT_NATIVE_DECIMALS = 18;
/** nanousd (1e-9 USD) per one whole native token: 1 USD by default on the devnet. */
export const DEFAULT_NATIVE_USD_PRICE_NANO = NANOUSD_PER_USD;
export const DEFAULT_BASE_APY_BPS = 500;
export const DEFAULT_PLATFORM_FEE_BPS = 500;
/** Most USD (nanousd) a user may withdraw from the proxy wallet in 24 hours: 10,000 USD. */
export const DEFAULT_WITHDRAW_DAILY_LIMIT_NANO = 10_000_000_000_000n;
/** Unstaked tokens return after this long: 7 days. */
export const DEFAULT_UNBONDING_PERIOD_S = 7 * 24 * 60 * 60;
/** How often the deposit watcher reads new blocks. */
export const DEFAULT_WATCH_INTERVAL_MS = 2_000;
/** How often unbonded stakes are paid back. */
export const DEFAULT_RELEASE_INTERVAL_MS = 10_000;
/** `.invalid` is reserved (RFC 2606): operators set their own. */
export const DEFAULT_CONTACT_EMAIL = 'operator@gpumesh.invalid';
/** Node heartbeat interval the hub grants (TTL = 2 ×). */
export const DEFAULT_ROUTER_HEARTBEAT_INTERVAL_MS = 10_000;
/** Largest node protocol frame (4 MiB). */
export const DEFAULT_ROUTER_MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** 2 MiB of audio or images per request: 2.7 MiB as base64, inside the default 4 MiB frame. */
export const DEFAULT_MAX_AUDIO_BYTES = 2 * 1024 * 1024;
export const DEFAULT_MAX_AUDIO_SECONDS = 600;
export const DEFAULT_MAX_IMAGES = 8;
export const DEFAULT_MAX_IMAGE_BYTES = 2 * 1024 * 1024;
export const DEFAULT_IMAGE_FETCH_TIMEOUT_MS = 5_000;
/** How long a node may take for one job. */
export const DEFAULT_ROUTER_JOB_TIMEOUT_MS = 120_000;
/**
 * Nodes one request may try: the first, a hedge, and failovers before the first token. Four lets
 * the first request through three silent nodes cheaper than an honest one (route-request.ts).
 */
export const DEFAULT_ROUTER_MAX_ATTEMPTS = 4;
/** How often a replica announces the nodes it holds (peer.announceMs). */
export const DEFAULT_PEER_ANNOUNCE_MS = 1_000;
/** Largest max_tokens a request may ask for. */
export const DEFAULT_ROUTER_MAX_TOKENS_CAP = 4096;

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const Url = Type.String({ pattern: '^[a-z][a-z0-9+.-]*://' });

/** One rung of the staking tier ladder: at least `minStake` whole native tokens staked. */
const Tier = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 32 }),
    minStake: Type.Integer({ minimum: 0 }),
    multiplierBps: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export const CoordinatorConfigSchema = Type.Object(
  {
    host: Type.String({ default: DEFAULT_HOST, minLength: 1 }),
    port: Type.Integer({ default: DEFAULT_PORT, minimum: 0, maximum: 65535 }),
    dataDir: Type.String({ default: DEFAULT_DATA_DIR, minLength: 1 }),
    /** PostgreSQL URL; when absent the store is SQLite at <dataDir>/gpumesh.db. */
    databaseUrl: Type.Optional(Url),
    /** PostgreSQL schema to use (search_path); default public. */
    databaseSchema: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' })),
    /** Redis URL; when set, rate limits are shared by every replica. */
    redisUrl: Type.Optional(Url),
    /** Base URL of the app API as clients see it; default http://<host>:<port>. */
    publicUrl: Type.Optional(Url),
    /** Base URL of the inference router as clients see it; default publicUrl. */
    routerUrl: Type.Optional(Url),
    /** 32-byte master key (64 hex chars) for secrets at rest; else <dataDir>/master.key (0600). */
    masterKey: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
    /**
     * Where the node package tarballs install.sh installs are (pages/node-packages.ts); default:
     * the compiled coordinator's own, or packed from a source checkout on first request.
     */
    nodePackagesDir: Type.Optional(Type.String({ minLength: 1 })),
    /** The model catalog (JSON, catalog/catalog.ts); default: the one shipped with the coordinator. */
    catalogFile: Type.Optional(Type.String({ minLength: 1 })),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: DEFAULT_LOG_LEVEL },
    ),
    /** CORS origins allowed to call the API; '*' (default) as bearer tokens, not cookies, carry auth. */
    /** Trust X-Forwarded-For from a load balancer in front (per-IP limits then see clients). */
    trustProxy: Type.Boolean({ default: false }),
    corsOrigins: Type.Array(Type.String(), { default: ['*'] }),
    jwtTtlS: Type.Integer({ default: DEFAULT_JWT_TTL_S, minimum: 1 }),
    /**
     * The local devnet's dev wallets (private keys): the dashboard offers to sign in as one without
     * a browser wallet (auth/dev-sign-in.ts). Only with a chain on this machine (a loopback
     * rpcUrl); `npm start` sets it, a deployment never should.
     */
    devWallets: Type.Optional(Type.Array(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }), { maxItems: 16 })),
    nonceTtlMs: Type.Integer({ default: DEFAULT_NONCE_TTL_MS, minimum: 1 }),
    bodyLimitBytes: Type.Integer({ default: DEFAULT_BODY_LIMIT_BYTES, minimum: 1024 }),
    bodyMaxDepth: Type.Integer({ default: DEFAULT_BODY_MAX_DEPTH, minimum: 8, maximum: 1024 }),
    maxActiveKeys: Type.Integer({ default: DEFAULT_MAX_ACTIVE_KEYS, minimum: 1 }),
    rateLimit: Type.Object(
      {
        enabled: Type.Boolean({ default: true }),
        windowMs: Type.Integer({ default: DEFAULT_RATE_LIMIT_WINDOW_MS, minimum: 1 }),
        signInMax: Type.Integer({ default: DEFAULT_RATE_LIMIT_SIGN_IN_MAX, minimum: 1 }),
        userMax: Type.Integer({ default: DEFAULT_RATE_LIMIT_USER_MAX, minimum: 1 }),
        anonymousMax: Type.Integer({ default: DEFAULT_RATE_LIMIT_ANONYMOUS_MAX, minimum: 1 }),
        failedCredentialMax: Type.Integer({ default: DEFAULT_RATE_LIMIT_FAILED_CREDENTIAL_MAX, minimum: 1 }),
        namespace: Type.String({ default: DEFAULT_RATE_LIMIT_NAMESPACE }),
      },
      { default: {}, additionalProperties: false },
    ),
    chain: Type.Object(
      {
        rpcUrl: Type.Optional(Url),
        explorerUrl: Type.Optional(Url),
        chainId: Type.Integer({ default: DEFAULT_CHAIN_ID, minimum: 1 }),
        gasPriceWei: Type.BigInt({ default: DEFAULT_GAS_PRICE_WEI, minimum: 0n }),
        confirmations: Type.Integer({ default: DEFAULT_CONFIRMATIONS, minimum: 0 }),
        nativeSymbol: Type.String({ default: DEFAULT_NATIVE_SYMBOL, pattern: '^[A-Z][A-Z0-9.]{0,11}$' }),
        nativeDecimals: Type.Integer({ default: DEFAULT_NATIVE_DECIMALS, minimum: 0, maximum: 36 }),
        nativeUsdPriceNano: Type.BigInt({ default: DEFAULT_NATIVE_USD_PRICE_NANO, minimum: 0n }),
        /** Stable tokens accepted for top-up: symbol → ERC-20 address (filled when deployed). */
        tokens: Type.Record(Type.String(), Address, { default: {} }),
        stakingVault: Type.Optional(Address),
        rewardsVault: Type.Optional(Address),
        /** Private key (0x + 64 hex) of the staking vault, to pay unbonded stakes back. Secret. */
        stakingVaultKey: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })),
        /** Private key (0x + 64 hex) of the rewards vault, to pay claimed rewards. Secret. */
        rewardsVaultKey: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })),
        /** The treasury: pays node owners their earnings (POST /api/provider/payout). */
        treasury: Type.Optional(Address),
        /** Private key (0x + 64 hex) of the treasury. Secret. */
        treasuryKey: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })),
        withdrawDailyLimitNano: Type.BigInt({ default: DEFAULT_WITHDRAW_DAILY_LIMIT_NANO, minimum: 0n }),
        /** Credit transfers to proxy wallets without a top-up call (off: native sent for gas stays spendable). */
        watchDeposits: Type.Boolean({ default: false }),
        watchIntervalMs: Type.Integer({ default: DEFAULT_WATCH_INTERVAL_MS, minimum: 10 }),
      },
      { default: {}, additionalProperties: false },
    ),
    staking: Type.Object(
      {
        baseApyBps: Type.Integer({ default: DEFAULT_BASE_APY_BPS, minimum: 0 }),
        unbondingPeriodS: Type.Integer({ default: DEFAULT_UNBONDING_PERIOD_S, minimum: 0 }),
        releaseIntervalMs: Type.Integer({ default: DEFAULT_RELEASE_INTERVAL_MS, minimum: 10 }),
        tiers: Type.Array(Tier, {
          default: [
            { name: 'none', minStake: 0, multiplierBps: 10_000 },
            { name: 'basic', minStake: 100, multiplierBps: 10_000 },
            { name: 'silver', minStake: 1_000, multiplierBps: 11_000 },
            { name: 'gold', minStake: 10_000, multiplierBps: 12_500 },
            { name: 'platinum', minStake: 100_000, multiplierBps: 15_000 },
          ],
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Payouts of node owners' earnings from the treasury (provider/payout.ts). */
    payouts: Type.Object(
      {
        /** The smallest payout, nanousd (default 0.01 USD). */
        minNano: Type.BigInt({ default: DEFAULT_PAYOUT_MIN_NANO, minimum: 1n }),
        /** The most one owner may be paid in any 24 hours, nanousd (default 1,000 USD). */
        dailyCapNano: Type.BigInt({ default: DEFAULT_PAYOUT_DAILY_CAP_NANO, minimum: 0n }),
        /** A payout still unsettled this long after its last change is settled from the chain. */
        settleAfterMs: Type.Integer({ default: DEFAULT_PAYOUT_SETTLE_AFTER_MS, minimum: 100 }),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Verification of what nodes serve (trust/, NODE_PROTOCOL.md "Verification"). */
    trust: Type.Object(
      {
        /** Mean time between canaries to each verifiable node; 0 turns canaries off. */
        canaryIntervalMs: Type.Integer({ default: DEFAULT_CANARY_INTERVAL_MS, minimum: 0 }),
        /** "In the top k" for the raw figures /network shows (the decision uses the sampled distribution). */
        topK: Type.Integer({ default: 8, minimum: 1, maximum: 100 }),
        /** Passed verifications that end a node's probation. */
        passesToTrust: Type.Integer({ default: 5, minimum: 1 }),
        /** The most of a model's recent requests a node on probation takes while a trusted node could. */
        probationShare: Type.Number({ default: 0.1, minimum: 0, maximum: 1 }),
        /**
         * Share of live completions verified like canaries: one more party (a network verifier
         * holding the weights, or the coordinator) sees the prompt, never a third party when the
         * request says provider.data_collection "deny".
         */
        spotCheckRate: Type.Number({ default: DEFAULT_SPOT_CHECK_RATE, minimum: 0, maximum: 1 }),
        /** Share of a network verifier's passing verdicts put to a second verifier too (failing ones always are). */
        secondOpinionRate: Type.Number({ default: 0.1, minimum: 0, maximum: 1 }),
        /** The most a network verifier is paid for one verify job, 1e-9 USD (its fee: tokens × the cheaper input price). */
        maxVerifyFeeNano: Type.BigInt({ default: 100_000n, minimum: 0n }),
        /** Share of the owner's stake (basis points) slashed into the rewards vault when a node is suspended. */
        slashBps: Type.Integer({ default: 1_000, minimum: 0, maximum: 10_000 }),
        /** A node whose reputation (0…100, trust/reputation.ts) falls below this is suspended. */
        minReputation: Type.Integer({ default: 25, minimum: 0, maximum: 100 }),
        /** How often each replica scores its nodes; 0 turns the check off. */
        reputationIntervalMs: Type.Integer({ default: 60_000, minimum: 0 }),
        /**
         * GGUF files the coordinator verifies with itself (CPU) when no network node holds the
         * weights a node claims (trust/local-verifier.ts); unset: only network nodes verify.
         */
        verifierModelsDir: Type.Optional(Type.String({ minLength: 1 })),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Contact published in /.well-known/ai-plugin.json. */
    contactEmail: Type.String({ default: DEFAULT_CONTACT_EMAIL, pattern: '^[^@\\s]+@[^@\\s]+$' }),
    platformFeeBps: Type.Integer({ default: DEFAULT_PLATFORM_FEE_BPS, minimum: 0, maximum: 10_000 }),
    /** The inference router and node hub. */
    /**
     * Replicas: with PostgreSQL and Redis shared, each replica announces the nodes it holds on Redis
     * and relays jobs for them to the others over peer-RPC (gRPC, protocol/proto/gpumesh.proto).
     */
    peer: Type.Object(
      {
        /** Port of this replica's peer-RPC server; unset: no relaying (one replica, or SQLite). */
        port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
        /** Interface the peer-RPC server binds. */
        host: Type.String({ default: DEFAULT_HOST, minLength: 1 }),
        /** host:port the other replicas dial; default <host>:<bound port> (the host name for 0.0.0.0 or ::). */
        url: Type.Optional(Type.String({ pattern: '^[^\\s/]+:[0-9]{1,5}$' })),
        /** How often this replica announces its nodes (and at most how stale the others' view is). */
        announceMs: Type.Integer({ default: DEFAULT_PEER_ANNOUNCE_MS, minimum: 10, maximum: 60_000 }),
        /**
         * Mutual TLS between replicas: this replica's certificate and key, and the CA that signed
         * every replica's certificate (PEM files). All three, or none (plaintext: a private network only).
         */
        tlsCert: Type.Optional(Type.String({ minLength: 1 })),
        tlsKey: Type.Optional(Type.String({ minLength: 1 })),
        tlsCa: Type.Optional(Type.String({ minLength: 1 })),
        /** Redis channel prefix: replicas of one network share it. */
        namespace: Type.String({ default: 'gpumesh', pattern: '^[A-Za-z0-9:_-]{1,64}$' }),
      },
      { default: {}, additionalProperties: false },
    ),
    /** Vision and voice requests (v1/media/): what a request may carry, and the image-URL fetcher's guard. */
    media: Type.Object(
      {
        /** Largest audio file a transcription takes; with base64 (4/3) the job must fit router.maxFrameBytes. */
        maxAudioBytes: Type.Integer({ default: DEFAULT_MAX_AUDIO_BYTES, minimum: 1024 }),
        /** Longest audio a transcription takes, seconds (as the coordinator reads it from the file). */
        maxAudioSeconds: Type.Integer({ default: DEFAULT_MAX_AUDIO_SECONDS, minimum: 1 }),
        /** Most images one chat request carries. */
        maxImages: Type.Integer({ default: DEFAULT_MAX_IMAGES, minimum: 1, maximum: 64 }),
        /** Most image bytes (decoded) one chat request carries, all images together. */
        maxImageBytes: Type.Integer({ default: DEFAULT_MAX_IMAGE_BYTES, minimum: 1024 }),
        /** How long fetching one http(s) image may take. */
        imageFetchTimeoutMs: Type.Integer({
          default: DEFAULT_IMAGE_FETCH_TIMEOUT_MS,
          minimum: 1,
          maximum: 60_000,
        }),
        /**
         * Addresses the image fetcher may reach although they are private, loopback or link-local
         * (exact IPs, e.g. `127.0.0.1`). Empty by default: tests set it for their local image server.
         */
        imageFetchAllowAddresses: Type.Array(Type.String({ minLength: 2, maxLength: 64 }), {
          default: [],
          maxItems: 64,
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    router: Type.Object(
      {
        heartbeatIntervalMs: Type.Integer({
          default: DEFAULT_ROUTER_HEARTBEAT_INTERVAL_MS,
          minimum: 50,
          maximum: 300_000,
        }),
        maxFrameBytes: Type.Integer({ default: DEFAULT_ROUTER_MAX_FRAME_BYTES, minimum: 64 * 1024 }),
        jobTimeoutMs: Type.Integer({ default: DEFAULT_ROUTER_JOB_TIMEOUT_MS, minimum: 1 }),
        maxAttempts: Type.Integer({ default: DEFAULT_ROUTER_MAX_ATTEMPTS, minimum: 1, maximum: 10 }),
        maxTokensCap: Type.Integer({ default: DEFAULT_ROUTER_MAX_TOKENS_CAP, minimum: 1 }),
        /** First-token deadline: this, plus the prompt's prefill, before an attempt fails over. */
        ttftMs: Type.Integer({ default: 5_000, minimum: 1 }),
        /** Prefill time allowed per token of the prompt's bound, ms (fractions allowed). */
        prefillMsPerToken: Type.Number({ default: 1, minimum: 0 }),
        /** The slowest generation a non-streamed job may show before failing over, tokens/s. */
        minTokensPerSecond: Type.Number({ default: 20, exclusiveMinimum: 0 }),
        /** Requests one model's wait queue holds when every candidate is at capacity (0: none wait). */
        queueDepth: Type.Integer({ default: DEFAULT_QUEUE_DEPTH, minimum: 0, maximum: 100_000 }),
        /** How long a queued request waits for a slot before 503. */
        queueWaitMs: Type.Integer({ default: DEFAULT_QUEUE_WAIT_MS, minimum: 0, maximum: 600_000 }),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

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
