/**
 * The ledger's data types, in a module of their own: the operations (reserve, settle), the writer
 * thread and the usage row all share them, and none of them need import another for a type.
 */
import type { UsageStatus } from '../db/tables/usage.js';

export type ReserveResult =
  | { ok: true; reservationId: string; amountNano: bigint; balanceNano: bigint }
  | { ok: false; reason: 'insufficient_credits' };

/** A reservation to place, its id and time decided. */
export type Hold = {
  userId: string;
  amountNano: bigint;
  reservationId: string;
  now: number;
  /** The replica that holds it (released by the others if it dies). */
  holder: string | null;
};

/** What a request's usage row says, besides what it cost (the settlement adds that). */
export type UsageRow = {
  requestId: string;
  userId: string;
  keyId: string | null;
  model: string;
  nodeId: string;
  kind: string;
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those billed at the node's cached price (absent: none). */
  cachedTokens?: number;
  /** What they saved against the input price, nanousd. */
  cacheDiscountNano?: bigint;
  status: UsageStatus;
  now: number;
  /** From the request's arrival to its end, ms. */
  latencyMs?: number;
  /** From the request's arrival to the node's first sign of work, ms. */
  ttftMs?: number;
  finishReason?: string | null;
  /** The request was streamed (OpenRouter's `streamed`). */
  streamed?: boolean;
  /** The id the serving node knew the job by (its frames' jobId). */
  upstreamId?: string;
  /** Who sent it (absent: nothing kept, as with `provider.zdr`). */
  origin?: RequestOrigin;
};

/**
 * Who sent a request, as its headers and body say: OpenRouter's `origin`, `http_referer`,
 * `user_agent` and `external_user` of a generation (v1/request-origin.ts reads them).
 */
export type RequestOrigin = {
  /** The Origin header, else the scheme and host of the referer; "" when neither was sent. */
  origin: string;
  httpReferer: string | null;
  userAgent: string | null;
  /** The body's `user`. */
  externalUser: string | null;
};

/** A settlement as data (its time decided), as the ledger writer thread receives it. */
export type Settlement = {
  reservationId: string;
  /** What the provider earns for the tokens delivered, nanousd. */
  providerNano: bigint;
  /** The platform fee on top, nanousd. The user pays providerNano + feeNano. */
  feeNano: bigint;
  /** The provider's earnings account (see providerAccountId). */
  providerAccountId: string;
  /** The request's usage row, written in the same transaction with what it cost. */
  usage?: UsageRow;
  now: number;
};

export type SettleOutcome = {
  /** The user's account. */
  accountId: string;
  /** What the user paid: providerNano + feeNano (never more than the reservation). */
  chargedNano: bigint;
  providerNano: bigint;
  feeNano: bigint;
  /** The reservation's unused part, back in the balance. */
  releasedNano: bigint;
  balanceNano: bigint;
};
