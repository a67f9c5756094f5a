/**
 * The coordinator's ONE error registry and its error body `{"error":{"message","type","code","param"}}`
 * (design.md); error-handler.ts turns anything thrown into it. Capabilities add their codes to
 * `ERRORS` (and to the table in coordinator/README.md — errors.test.ts keeps the two in sync).
 */
import type { FastifyRequest } from 'fastify';
import { isOpenRouterRequest, toOpenRouterError } from './openrouter-error.js';

type ErrorDefinition = {
  readonly status: number;
  /** OpenAI-style error type, so OpenAI SDKs classify our errors correctly. */
  readonly type: string;
  readonly message: string;
  /** Whether the same request may succeed when retried later. */
  readonly retryable: boolean;
};

export const ERRORS = {
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request is malformed.',
    retryable: false,
  },
  invalid_credential: {
    status: 401,
    type: 'authentication_error',
    message: 'Missing, invalid or expired credential.',
    retryable: false,
  },
  context_length_exceeded: {
    status: 400,
    type: 'invalid_request_error',
    message: "The request does not fit the model's context window.",
    retryable: false,
  },
  insufficient_credits: {
    status: 402,
    type: 'insufficient_quota',
    message: 'Not enough credits for this request.',
    retryable: false,
  },
  key_credit_limit_reached: {
    status: 402,
    type: 'insufficient_quota',
    message: "This request may exceed the API key's credit limit.",
    retryable: false,
  },
  forbidden: {
    status: 403,
    type: 'permission_error',
    message: 'This credential may not do that.',
    retryable: false,
  },
  not_found: { status: 404, type: 'not_found_error', message: 'Not found.', retryable: false },
  model_not_found: {
    status: 404,
    type: 'not_found_error',
    message: 'The model does not exist or is not served.',
    retryable: false,
  },
  no_matching_provider: {
    status: 404,
    type: 'not_found_error',
    message: "No endpoints found matching the request's provider preferences.",
    retryable: false,
  },
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    message: 'Method not allowed.',
    retryable: false,
  },
  key_limit_reached: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This wallet already holds the maximum number of active keys.',
    retryable: false,
  },
  payment_already_used: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This payment was already credited.',
    retryable: false,
  },
  payload_too_large: {
    status: 413,
    type: 'invalid_request_error',
    message: 'The request body is too large.',
    retryable: false,
  },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    message: 'Bodies must be application/json.',
    retryable: false,
  },
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Too many requests; retry later.',
    retryable: true,
  },
  internal_error: { status: 500, type: 'api_error', message: 'Internal error.', retryable: true },
  invalid_config: { status: 500, type: 'api_error', message: 'Invalid configuration.', retryable: false },
  provider_error: {
    status: 502,
    type: 'api_error',
    message: 'The provider failed to serve the request.',
    retryable: true,
  },
  no_provider_available: {
    status: 503,
    type: 'api_error',
    message: 'No provider is available for this model.',
    retryable: true,
  },
  not_ready: {
    status: 503,
    type: 'api_error',
    message: 'The coordinator is not ready to serve requests.',
    retryable: true,
  },
  provider_timeout: {
    status: 504,
    type: 'api_error',
    message: 'The provider did not answer in time.',
    retryable: true,
  },
  amount_mismatch: {
    status: 400,
    type: 'invalid_request_error',
    message: 'amountUsd differs from what the transaction paid.',
    retryable: false,
  },
  payment_failed: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The payment transaction failed on chain.',
    retryable: false,
  },
  payment_wrong_recipient: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The payment sent nothing to your proxy wallet.',
    retryable: false,
  },
  payment_wrong_token: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The payment was not made in the token named by source.',
    retryable: false,
  },
  insufficient_funds: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The wallet cannot cover this amount plus gas.',
    retryable: false,
  },
  payment_not_found: {
    status: 404,
    type: 'not_found_error',
    message: 'No transaction with this hash is known to the chain.',
    retryable: false,
  },
  payment_not_external: {
    status: 400,
    type: 'invalid_request_error',
    message:
      'The transfer came from a wallet this service manages; only transfers from outside are deposits.',
    retryable: false,
  },
  payment_spent: {
    status: 409,
    type: 'invalid_request_error',
    message: "The payment's tokens are no longer uncredited in your proxy wallet.",
    retryable: false,
  },
  recipient_not_allowed: {
    status: 400,
    type: 'invalid_request_error',
    message: 'Withdrawals to a wallet this service manages are refused; send to a wallet of your own.',
    retryable: false,
  },
  wallet_busy: {
    status: 503,
    type: 'api_error',
    message: 'Another operation on this wallet is in progress; try again shortly.',
    retryable: true,
  },
  withdraw_limit_exceeded: {
    status: 429,
    type: 'rate_limit_error',
    message: 'This withdrawal would exceed the daily withdrawal limit.',
    retryable: true,
  },
  exceeds_stake: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The amount is more than is staked.',
    retryable: false,
  },
  too_many_unbondings: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This position has the most open unbondings the staking pool allows; withdraw first.',
    retryable: false,
  },
  nothing_to_withdraw: {
    status: 409,
    type: 'invalid_request_error',
    message: 'No unbonding of this position has reached its release time.',
    retryable: true,
  },
  nothing_to_claim: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This position has no rewards to claim.',
    retryable: false,
  },
  rewards_pool_empty: {
    status: 409,
    type: 'invalid_request_error',
    message: "The staking pool's rewards pool holds nothing to pay now; rewards stay accrued.",
    retryable: true,
  },
  moved_to_pool: {
    status: 409,
    type: 'invalid_request_error',
    message:
      'This transfer of the staking vault was never signed; the move into the staking pool carries it.',
    retryable: false,
  },
  chain_tx_failed: {
    status: 502,
    type: 'api_error',
    message: 'A transaction the service sent failed on chain.',
    retryable: false,
  },
  payout_below_minimum: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The payout is below the minimum.',
    retryable: false,
  },
  insufficient_earnings: {
    status: 402,
    type: 'invalid_request_error',
    message: 'Your earnings balance does not cover this payout.',
    retryable: false,
  },
  payout_limit_exceeded: {
    status: 429,
    type: 'rate_limit_error',
    message: 'This payout would exceed the daily payout limit.',
    retryable: true,
  },
  idempotency_conflict: {
    status: 409,
    type: 'invalid_request_error',
    message: 'This Idempotency-Key was used for a different request.',
    retryable: false,
  },
  treasury_unavailable: {
    status: 503,
    type: 'api_error',
    message: 'The treasury cannot pay this now; your earnings are untouched. Try again later.',
    retryable: true,
  },
  node_suspended: {
    status: 403,
    type: 'permission_error',
    message: 'The node is suspended; its earnings are held until an operator reinstates it.',
    retryable: false,
  },
  chain_unavailable: {
    status: 503,
    type: 'api_error',
    message: 'The chain is unavailable; try again shortly.',
    retryable: true,
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERRORS;

/** The wire body of every error. */
export type ErrorBody = {
  error: { message: string; type: string; code: string; param: string | null };
};

/** Our typed error. The message is client-safe by construction: never put secrets or SQL in it. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | null;
  readonly retryAfterS: number | undefined;
  /** The code OpenRouter answers this error with on /api/v1, when it differs (errorHandler). */
  readonly openRouterCode: ErrorCode | undefined;

  constructor(
    code: ErrorCode,
    message?: string,
    options: {
      param?: string | null;
      retryAfterS?: number;
      cause?: unknown;
      openRouterCode?: ErrorCode;
    } = {},
  ) {
    super(
      message ?? ERRORS[code].message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ApiError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.param = options.param ?? null;
    this.retryAfterS = options.retryAfterS;
    this.openRouterCode = options.openRouterCode;
  }

  /** The common wire shape. */
  toBody(): ErrorBody {
    return {
      error: { message: this.message, type: ERRORS[this.code].type, code: this.code, param: this.param },
    };
  }
}

/** The error body a request gets: OpenAI's on /v1 and /api, OpenRouter's on /api/v1 (openrouter-error.ts). */
export function errorBodyFor(request: Pick<FastifyRequest, 'originalUrl'>, apiError: ApiError) {
  const body = apiError.toBody();
  return isOpenRouterRequest(request) ? { error: toOpenRouterError(body.error, apiError.status) } : body;
}

/** True for anything that looks like the common error body (used by tests and clients). */
export function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const e = (value as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return false;
  const { message, type, code, param } = e as Record<string, unknown>;
  return (
    typeof message === 'string' &&
    typeof type === 'string' &&
    typeof code === 'string' &&
    (param === null || typeof param === 'string') &&
    Object.keys(e).length === 4
  );
}
