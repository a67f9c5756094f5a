import type { AppContext } from '../app-context.js';
import { SIGN_IN_STATEMENT } from '../auth/sign-in-message.js';
import { STABLE_DECIMALS, STABLE_SYMBOLS as STABLE_TOKENS } from '../chain/constants.js';
import { ERRORS } from '../errors.js';
import { TX_METHODS } from '../tx/routes.js';
import { listEndpoints } from './list-endpoints.js';
import type { Skills } from './skills-schema.js';

export const MODEL_FAMILIES = ['chat', 'text', 'embeddings', 'vision', 'voice'] as const;
/** The devnet's block time (service spec: about 0.5 s). */
export const BLOCK_TIME_MS = 500;

/** /api/skills.json: the live configuration and route table as one machine-readable document. */
export function buildSkills(ctx: AppContext): Skills {
  const { config } = ctx;
  const app = config.publicUrl;
  return {
    schemaVersion: 1,
    name: 'gpumesh',
    description:
      'Open network for paid AI inference: wallet sign-in, credits in USD, OpenAI-compatible /v1 served by GPU/CPU provider nodes.',
    urls: {
      app,
      router: config.routerUrl,
      tx: `${app}/tx`,
      openapi: `${app}/api/openapi.json`,
      skillsMd: `${app}/SKILLS.md`,
      quickstart: `${app}/api/skills`,
      schema: `${app}/api/skills.schema.json`,
      rpc: config.chain.rpcUrl ?? null,
      explorer: config.chain.explorerUrl ?? null,
    },
    chain: {
      chainId: config.chain.chainId,
      gasPriceWei: config.chain.gasPriceWei.toString(),
      transactionType: 'legacy',
      eip1559: false,
      blockTimeMs: BLOCK_TIME_MS,
      nativeSymbol: config.chain.nativeSymbol,
      nativeDecimals: config.chain.nativeDecimals,
      nativeUsdPriceNano: config.chain.nativeUsdPriceNano.toString(),
      tokens: STABLE_TOKENS.map((symbol) => ({
        symbol,
        address: config.chain.tokens[symbol] ?? null,
        decimals: STABLE_DECIMALS,
      })),
      topUpSources: ['native', ...STABLE_TOKENS],
    },
    auth: {
      signIn: [
        {
          step: 1,
          method: 'GET',
          path: '/api/auth/nonce?address=<WALLET_ADDRESS>',
          description: 'Receive {message}.',
        },
        {
          step: 2,
          method: 'SIGN',
          path: '-',
          description: 'Sign message with the wallet (EIP-191 personal_sign).',
        },
        {
          step: 3,
          method: 'POST',
          path: '/api/auth/verify',
          description: 'Send {address, message, signature}; receive {token} (JWT).',
        },
        { step: 4, method: 'ANY', path: '/api/*', description: 'Send Authorization: Bearer <token>.' },
      ],
      messagePrefix: SIGN_IN_STATEMENT,
      signature: 'EIP-191 personal_sign (EIP-1271 for contract wallets when the chain is configured)',
      nonceTtlS: Math.floor(config.nonceTtlMs / 1000),
      jwtTtlS: config.jwtTtlS,
      header: 'Authorization: Bearer <ACCESS_TOKEN>',
    },
    keys: {
      maxActive: config.maxActiveKeys,
      format: 'sk- followed by 40 base62 characters',
      header: 'Authorization: Bearer <API_KEY>',
    },
    staking: {
      baseApyBps: config.staking.baseApyBps,
      tiers: config.staking.tiers.map((t) => ({
        name: t.name,
        minStake: t.minStake,
        multiplierBps: t.multiplierBps,
      })),
      amountFormat: `decimal with exactly 4 fractional digits, a space, the symbol: "12.3400 ${config.chain.nativeSymbol}"`,
      /** POST /tx methods; the non-public ones need the JWT of the wallet in params[0]. */
      txMethods: Object.entries(TX_METHODS).map(([method, { public: isPublic }]) => ({
        method,
        public: isPublic,
      })),
    },
    platformFeeBps: config.platformFeeBps,
    modelFamilies: [...MODEL_FAMILIES],
    limits: {
      bodyLimitBytes: config.bodyLimitBytes,
      rateLimitWindowS: Math.ceil(config.rateLimit.windowMs / 1000),
      signInPerIp: config.rateLimit.signInMax,
      perUser: config.rateLimit.userMax,
      anonymousPerIp: config.rateLimit.anonymousMax,
      failedCredentialsPerIp: config.rateLimit.failedCredentialMax,
      maxAudioBytes: config.media.maxAudioBytes,
      maxAudioSeconds: config.media.maxAudioSeconds,
      maxImages: config.media.maxImages,
      maxImageBytes: config.media.maxImageBytes,
    },
    errors: {
      shape: '{"error":{"message":string,"type":string,"code":string,"param":string|null}}',
      codes: Object.entries(ERRORS)
        .filter(([, def]) => def.status < 600)
        .map(([code, def]) => ({ code, status: def.status, type: def.type, retryable: def.retryable })),
    },
    endpoints: listEndpoints(ctx.routes),
  };
}
