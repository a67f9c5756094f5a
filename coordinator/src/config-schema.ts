/**
 * Every field of the coordinator's configuration, described once with its default
 * (`CoordinatorConfigSchema`, TypeBox); config.ts loads and validates it. Defaults are named
 * constants with their units. Money defaults are written in nanousd (1e-9 USD, ledger/money.ts;
 * config.test.ts checks them against it): this module sits below every capability, so it names no
 * capability's constants — the router's wait queue and the devnet take theirs from here.
 */
import { Type } from '@sinclair/typebox';

/** Default native-token symbol of the devnet. */
export const DEFAULT_NATIVE_SYMBOL = 'TOK';
/** Requests one model's wait queue holds at most; past it, 503 at once (router/wait-queue.ts). */
export const DEFAULT_QUEUE_DEPTH = 256;
/** How long a request waits in the queue at most before 503. */
export const DEFAULT_QUEUE_WAIT_MS = 10_000;
/** How long a node is taken to keep a chat prefix it was sent in its KV cache (router/sent-prefixes.ts). */
export const DEFAULT_PREFIX_CACHE_LIFETIME_MS = 10 * 60_000;
/** How much dearer than the cheapest a node holding a request's prefix may be and still be preferred: 10 %. */
export const DEFAULT_PREFIX_AFFINITY_MARGIN_BPS = 1000;
export const DEFAULT_HOST = '127.0.0.1';
/** Every 5 minutes per node, on average. */
export const DEFAULT_CANARY_INTERVAL_MS = 300_000;
/** Share of live completions spot-checked by default (issue 29: on, small; each costs a verify job). */
export const DEFAULT_SPOT_CHECK_RATE = 0.02;
/** The smallest payout: 0.01 USD in nanousd. */
export const DEFAULT_PAYOUT_MIN_NANO = 10_000_000n;
/** The most one owner is paid in 24 hours: 1,000 USD in nanousd. */
export const DEFAULT_PAYOUT_DAILY_CAP_NANO = 1_000_000_000_000n;
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
export const DEFAULT_NATIVE_USD_PRICE_NANO = 1_000_000_000n;
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
        /**
         * StakingPool.sol (issue 43): when set, /tx staking calls it from each owner's proxy wallet,
         * tiers come from its positions and slashes are its `slash` calls.
         */
        stakingPool: Type.Optional(Address),
        /** Private key (0x + 64 hex) of the pool's slasher (fixed at its deployment). Secret. */
        slasherKey: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })),
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
        /**
         * Canaries replay recent client jobs to other nodes of the model when there are any
         * (trust/canaries/replay-pool.ts): never a job whose client said provider.data_collection "deny",
         * never to the node (or owner) that served it. Off: every canary is made.
         */
        replayTraffic: Type.Boolean({ default: true }),
        /** Share of a network verifier's passing verdicts put to a second verifier too (failing ones always are). */
        secondOpinionRate: Type.Number({ default: 0.1, minimum: 0, maximum: 1 }),
        /** The most a network verifier is paid for one verify job, 1e-9 USD (its fee: tokens × the cheaper input price). */
        maxVerifyFeeNano: Type.BigInt({ default: 100_000n, minimum: 0n }),
        /** Share of the owner's stake (basis points) slashed into the rewards vault when a node is suspended. */
        slashBps: Type.Integer({ default: 1_000, minimum: 0, maximum: 10_000 }),
        /** A node whose reputation (0…100, trust/standing/reputation.ts) falls below this is suspended. */
        minReputation: Type.Integer({ default: 25, minimum: 0, maximum: 100 }),
        /** How often each replica scores its nodes; 0 turns the check off. */
        reputationIntervalMs: Type.Integer({ default: 60_000, minimum: 0 }),
        /**
         * GGUF files the coordinator verifies with itself (CPU) when no network node holds the
         * weights a node claims (trust/checks/local-verifier.ts); unset: only network nodes verify.
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
        /** Cached tokens are billed only for prefixes sent to the same node this recently (issue 44). */
        prefixCacheLifetimeMs: Type.Integer({
          default: DEFAULT_PREFIX_CACHE_LIFETIME_MS,
          minimum: 0,
          maximum: 24 * 60 * 60_000,
        }),
        /** Prefer the node holding a chat request's longest prefix (router/prefer-prefix.ts). */
        prefixAffinity: Type.Boolean({ default: true }),
        /** How much dearer than the cheapest that node may be, basis points. */
        prefixAffinityMarginBps: Type.Integer({
          default: DEFAULT_PREFIX_AFFINITY_MARGIN_BPS,
          minimum: 0,
          maximum: 10_000,
        }),
      },
      { default: {}, additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
