/**
 * One paid inference request, end to end (design.md "Data flow of one paid request"):
 * pick candidates → reserve the worst case → job to the node → relay → settle the actual cost,
 * release the rest, credit the provider, record usage (one transaction) → answer.
 * A failure before the first token releases the hold and fails over to the next candidate, so the
 * user never pays twice; a stream cut after its first token bills exactly what was delivered.
 */
import { randomUUID } from 'node:crypto';
import { isProtocolErrorCode, type JobKind, PROTOCOL_ERRORS } from '@gpumesh/protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { Hub, JobError, JobUsage } from '../hub/hub.js';
import { ledgerPending } from '../ledger/batch.js';
import { type BoundedUsage, boundUsage, completionBound, outputBytes } from '../ledger/bound-usage.js';
import { nanoToUsd } from '../ledger/money.js';
import { release } from '../ledger/release.js';
import { reserve } from '../ledger/reserve.js';
import { capCharge, type SettleOutcome, settle } from '../ledger/settle.js';
import { providerAccountId } from '../ledger/tables.js';
import type { Metrics } from '../metrics/create-metrics.js';
import { computeCost } from '../router/compute-cost.js';
import type { Entry, PickResult, ProviderPreferences } from '../router/pick-index.js';
import { recordUsageViolation } from '../usage/record-usage-violation.js';
import { USAGE_STATUS, type UsageStatus } from '../usage/tables.js';

export type RouterSettings = {
  platformFeeBps: number;
  jobTimeoutMs: number;
  maxAttempts: number;
};

export type InferenceDeps = {
  db: Kysely<Database>;
  hub: Hub;
  settings: RouterSettings;
  clock: { now(): number };
  /** Tokens, credits spent and failovers for /metrics (the app's registry). */
  metrics?: Pick<Metrics, 'tokens' | 'creditsSpentNano' | 'failovers' | 'usageClamped'>;
  /** Where a settlement that failed after the answer went out, and a node's inflated usage, are reported. */
  log?: {
    error(details: Record<string, unknown>, message: string): void;
    warn(details: Record<string, unknown>, message: string): void;
  };
};

/**
 * Settlements run after the answer is sent (the charge is known before it commits); past this many
 * ledger operations waiting to commit, a request waits for its own settlement before answering, so
 * a backlog can't grow without bound.
 */
export const MAX_LEDGER_BACKLOG = 512;

export type InferenceJob = {
  requestId: string;
  userId: string;
  keyId: string | null;
  kind: JobKind;
  model: string;
  /** The OpenAI request body the node receives (our routing fields removed, max_tokens explicit). */
  nodeRequest: Record<string, unknown>;
  stream: boolean;
  /** An upper bound of the prompt's tokens, for the worst-case reservation. */
  promptTokensBound: number;
  /** The completion tokens the node may produce at most (0 for embeddings). */
  maxTokens: number;
  provider: ProviderPreferences | undefined;
};

/** Where a streamed answer goes. `start` is called once, before the first chunk (headers). */
export type StreamSink = {
  start(nodeId: string): void;
  write(chunk: Record<string, unknown>): void;
  /** Ends the stream with a final chunk (usage and cost), or an error event; both then [DONE]. */
  finish(final: Record<string, unknown> | { error: ReturnType<ApiError['toBody']>['error'] }): void;
  /** True once the client went away. */
  readonly closed: boolean;
  /** Calls `fn` when the client goes away mid-stream. */
  onClose(fn: () => void): void;
};

export type UsageWithCost = JobUsage & { cost: number };

export type InferenceResult = {
  nodeId: string;
  /** The node's response with usage.cost added (non-streamed requests). */
  response: Record<string, unknown> & { usage: UsageWithCost };
  /** The charge: known when the answer goes out, committed by `settlement`. */
  chargedNano: bigint;
  /** Commits the charge, the provider's credit and the usage row (one transaction). */
  settlement: Promise<SettleOutcome>;
};

type AttemptOutcome =
  | {
      type: 'result';
      response: Record<string, unknown> & { usage: JobUsage };
      deliveredChunks: number;
      /** UTF-8 bytes of output the streamed chunks carried (see outputBytes). */
      deliveredBytes: number;
    }
  | {
      type: 'failed';
      error: JobError;
      deliveredChunks: number;
      deliveredTokens: number;
      deliveredBytes: number;
      clientGone: boolean;
    };

/**
 * Whether another node may well succeed after this job error: the protocol registry's `retryable`
 * for its code (never the node's own flag: a node cannot turn its refusal into a retry elsewhere),
 * unknown codes as internal_error, and `node_lost` (the coordinator's own: the session ended).
 */
export function failsOver(error: JobError): boolean {
  if (error.code === 'node_lost') return true;
  return PROTOCOL_ERRORS[isProtocolErrorCode(error.code) ? error.code : 'internal_error'].retryable;
}

/** The answer to a pick that found nobody. */
export function pickError(pick: Extract<PickResult, { ok: false }>, model: string): ApiError {
  if (pick.reason === 'model_not_found') {
    return new ApiError('model_not_found', `No live node serves the model "${model}".`, { param: 'model' });
  }
  const parts = Object.entries(pick.excluded).map(([reason, n]) => `${n} excluded by ${reason}`);
  return new ApiError(
    'no_provider_available',
    `No provider can take this request for "${model}" now: ${parts.join(', ') || 'no candidates'}.`,
    { param: pick.excluded.max_price ? 'provider.max_price' : null, retryAfterS: 1 },
  );
}

/**
 * Runs the request. Non-streamed: resolves with the response. Streamed: writes to `sink` and
 * resolves once the stream ended (an error before the first chunk still throws, so the caller can
 * answer with a plain HTTP error).
 */
export async function runInference(
  deps: InferenceDeps,
  job: InferenceJob,
  sink?: StreamSink,
): Promise<InferenceResult> {
  const pick = deps.hub.index.pick({
    modelId: job.model,
    ...(job.provider ? { provider: job.provider } : {}),
    limit: deps.settings.maxAttempts,
  });
  if (!pick.ok) throw pickError(pick, job.model);
  let lastError: JobError | undefined;
  for (const entry of pick.candidates) {
    if (!deps.hub.reachable(entry)) continue;
    const worst = computeCost({
      promptTokens: job.promptTokensBound,
      completionTokens: job.maxTokens,
      priceInNano: entry.priceInNano,
      priceOutNano: entry.priceOutNano,
      feeBps: deps.settings.platformFeeBps,
    });
    // Even a free node's job holds one nanousd, so a user with no credits is refused consistently.
    const amountNano = worst.totalNano > 0n ? worst.totalNano : 1n;
    const hold = await reserve(deps.db, { userId: job.userId, amountNano, clock: deps.clock });
    if (!hold.ok) {
      throw new ApiError(
        'insufficient_credits',
        `This request may cost up to $${nanoToUsd(amountNano)}; the available balance is lower.`,
      );
    }
    let outcome: AttemptOutcome;
    try {
      outcome = await attempt(deps, entry, job, sink);
    } catch (error) {
      await release(deps.db, { reservationId: hold.reservationId, clock: deps.clock });
      throw error;
    }
    if (outcome.type === 'result') {
      const usage = outcome.response.usage;
      // The node's counts, never beyond what the coordinator saw (ledger/bound-usage.ts): the
      // prompt's bound, max_tokens, and the output that reached the client.
      const deliveredBytes =
        outcome.deliveredChunks > 0 ? outcome.deliveredBytes : outputBytes(outcome.response);
      const counted = boundUsage(
        { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens },
        {
          promptTokens: job.promptTokensBound,
          completionTokens:
            job.kind === 'embedding'
              ? 0
              : completionBound({ maxTokens: job.maxTokens, deliveredBytes, choices: 1 }),
        },
      );
      if (counted.clamped) reportClamp(deps, job, entry, counted);
      const { promptTokens, completionTokens } = counted;
      const billed = await bill(
        deps,
        job,
        entry,
        hold,
        promptTokens,
        completionTokens,
        USAGE_STATUS.completed,
      );
      const withCost = {
        ...outcome.response,
        model: job.model,
        usage: {
          ...usage,
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
          cost: nanoToUsd(billed.chargedNano),
        },
      };
      if (sink) {
        if (!sink.closed) sink.finish(finalChunk(job, outcome.response, withCost.usage));
      }
      return { nodeId: entry.node.nodeId, response: withCost, ...billed };
    }
    const { error, deliveredChunks, clientGone } = outcome;
    if (deliveredChunks === 0 && !clientGone) {
      await release(deps.db, { reservationId: hold.reservationId, clock: deps.clock });
      lastError = error;
      if (failsOver(error)) {
        deps.metrics?.failovers.inc({ model: job.model });
        continue;
      }
      throw mapJobError(error);
    }
    // Cut short after the node had the job (the client left, or the node died after its first
    // token): the prompt was evaluated, so it is billed — the node's count if its error frame
    // carried one, else the coordinator's bound, never above the bound — plus the completion
    // tokens delivered (chunk.tokens, bounded like a result's). A failure before the first token
    // with the client still there failed over above and costs nothing.
    const status = clientGone ? USAGE_STATUS.clientDisconnected : USAGE_STATUS.nodeFailed;
    const counted = boundUsage(
      {
        promptTokens: error.usage?.prompt_tokens ?? job.promptTokensBound,
        completionTokens: outcome.deliveredTokens,
      },
      {
        promptTokens: job.promptTokensBound,
        completionTokens: completionBound({
          maxTokens: job.maxTokens,
          deliveredBytes: outcome.deliveredBytes,
          choices: 1,
        }),
      },
    );
    if (counted.clamped) reportClamp(deps, job, entry, counted);
    const { promptTokens, completionTokens: deliveredTokens } = counted;
    const billed = await bill(deps, job, entry, hold, promptTokens, deliveredTokens, status);
    if (sink && !sink.closed) sink.finish({ error: mapJobError(error).toBody().error });
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: deliveredTokens,
      total_tokens: promptTokens + deliveredTokens,
    };
    return {
      nodeId: entry.node.nodeId,
      response: { usage: { ...usage, cost: nanoToUsd(billed.chargedNano) } },
      ...billed,
    };
  }
  if (!lastError) {
    throw new ApiError('no_provider_available', `No provider for "${job.model}" is connected now.`, {
      retryAfterS: 1,
    });
  }
  throw mapJobError(lastError);
}

function attempt(
  deps: InferenceDeps,
  entry: Entry,
  job: InferenceJob,
  sink?: StreamSink,
): Promise<AttemptOutcome> {
  return new Promise((resolve) => {
    let deliveredChunks = 0;
    let deliveredTokens = 0;
    let deliveredBytes = 0;
    let clientGone = false;
    let done = false;
    const handle = deps.hub.dispatch(
      entry,
      {
        kind: job.kind,
        model: job.model,
        request: job.nodeRequest,
        stream: job.stream,
        timeoutMs: deps.settings.jobTimeoutMs,
      },
      {
        onChunk: (chunk, _seq, tokens) => {
          if (done || !sink || sink.closed) return;
          if (deliveredChunks === 0) sink.start(entry.node.nodeId);
          sink.write({ ...chunk, model: job.model });
          deliveredChunks++;
          deliveredTokens += tokens ?? tokensIn(chunk);
          deliveredBytes += outputBytes(chunk);
        },
        onResult: (response) => {
          if (done) return;
          done = true;
          if (sink && !sink.closed && deliveredChunks === 0) {
            // The node answered a stream request in one piece: stream it as one chunk.
            sink.start(entry.node.nodeId);
            sink.write(asChunk(job, response));
          }
          resolve({ type: 'result', response, deliveredChunks, deliveredBytes });
        },
        onError: (error) => {
          if (done) return;
          done = true;
          resolve({ type: 'failed', error, deliveredChunks, deliveredTokens, deliveredBytes, clientGone });
        },
      },
    );
    sink?.onClose(() => {
      if (done) return;
      clientGone = true;
      handle.cancel('client disconnected');
    });
  });
}

/**
 * Bills the tokens delivered: the charge is computed here (capped at the hold, as the settlement
 * caps it) and the settlement — charge, release of the rest, provider credit, usage row, in one
 * transaction — is queued on the ledger. The answer need not wait for its commit: ledger reads
 * wait for queued operations, so the client still reads its own usage and balance. Only when the
 * ledger is backed up does the request wait for its own settlement.
 */
async function bill(
  deps: InferenceDeps,
  job: InferenceJob,
  entry: Entry,
  hold: { reservationId: string; amountNano: bigint },
  promptTokens: number,
  completionTokens: number,
  status: UsageStatus,
): Promise<{ chargedNano: bigint; settlement: Promise<SettleOutcome> }> {
  const cost = computeCost({
    promptTokens,
    completionTokens,
    priceInNano: entry.priceInNano,
    priceOutNano: entry.priceOutNano,
    feeBps: deps.settings.platformFeeBps,
  });
  const { chargedNano } = capCharge(cost.providerNano, cost.feeNano, hold.amountNano);
  const settlement = settle(deps.db, {
    reservationId: hold.reservationId,
    providerNano: cost.providerNano,
    feeNano: cost.feeNano,
    providerAccountId: providerAccountId(entry.node.owner ?? entry.node.nodeId),
    clock: deps.clock,
    usage: {
      requestId: job.requestId,
      userId: job.userId,
      keyId: job.keyId,
      model: job.model,
      nodeId: entry.node.nodeId,
      kind: job.kind,
      promptTokens,
      completionTokens,
      status,
      now: deps.clock.now(),
    },
  }).then((settled) => {
    // settle returns null only for a hold no longer held: settled twice (impossible for a fresh
    // hold), or, with the SQLite writer thread, refused by the database after it was admitted.
    if (!settled) throw new Error('the reservation was not held');
    deps.metrics?.tokens.inc({ model: job.model, kind: 'prompt' }, promptTokens);
    deps.metrics?.tokens.inc({ model: job.model, kind: 'completion' }, completionTokens);
    deps.metrics?.creditsSpentNano.inc({ model: job.model }, Number(settled.chargedNano));
    return settled;
  });
  // A settlement that fails after the answer left: the hold stays in ledger_reservations for an
  // operator (the same state a crash between the node's answer and the commit leaves).
  settlement.catch((error: unknown) =>
    deps.log?.error(
      { err: error, requestId: job.requestId, reservationId: hold.reservationId },
      'settlement failed',
    ),
  );
  if (ledgerPending(deps.db) > MAX_LEDGER_BACKLOG) await settlement;
  return { chargedNano, settlement };
}

/**
 * A node claimed more tokens than the coordinator's bound: logged with its id and figures, counted
 * in gpumesh_usage_clamped_total and against the node (node_usage_violations, what its reputation
 * will weigh). The bill already uses the bounded counts.
 */
function reportClamp(deps: InferenceDeps, job: InferenceJob, entry: Entry, counted: BoundedUsage): void {
  const { claimed, bound } = counted.clamped!;
  if (claimed.promptTokens > bound.promptTokens) deps.metrics?.usageClamped.inc({ kind: 'prompt' });
  if (claimed.completionTokens > bound.completionTokens)
    deps.metrics?.usageClamped.inc({ kind: 'completion' });
  deps.log?.warn(
    { nodeId: entry.node.nodeId, model: job.model, requestId: job.requestId, claimed, bound },
    'node usage over the bound: clamped',
  );
  recordUsageViolation(deps.db, { nodeId: entry.node.nodeId, now: deps.clock.now() }).catch((err: unknown) =>
    deps.log?.error({ err, nodeId: entry.node.nodeId }, 'recording a usage violation failed'),
  );
}

/**
 * Tokens in a streamed chunk without `tokens` (nodes before chunk.tokens sent one token per chunk):
 * one per choice with text; an empty delta carries none.
 */
function tokensIn(chunk: Record<string, unknown>): number {
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return 0;
  let n = 0;
  for (const c of choices as { delta?: { content?: unknown }; text?: unknown }[]) {
    const piece = c?.delta?.content ?? c?.text;
    if (typeof piece === 'string' && piece.length > 0) n++;
  }
  return n;
}

function asChunk(job: InferenceJob, response: Record<string, unknown>): Record<string, unknown> {
  const choice = (response.choices as { message?: { content?: string }; text?: string }[] | undefined)?.[0];
  const id = (response.id as string | undefined) ?? job.requestId;
  const created = (response.created as number | undefined) ?? Math.floor(Date.now() / 1000);
  if (job.kind === 'completion') {
    return {
      id,
      object: 'text_completion',
      created,
      model: job.model,
      choices: [{ index: 0, text: choice?.text ?? '', finish_reason: null }],
    };
  }
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model: job.model,
    choices: [
      {
        index: 0,
        delta: { role: 'assistant', content: choice?.message?.content ?? '' },
        finish_reason: null,
      },
    ],
  };
}

/** The last chunk of a stream: the finish reason and usage with its cost. */
function finalChunk(
  job: InferenceJob,
  response: Record<string, unknown>,
  usage: UsageWithCost,
): Record<string, unknown> {
  const choice = (response.choices as { finish_reason?: string }[] | undefined)?.[0];
  const id = (response.id as string | undefined) ?? job.requestId;
  const created = (response.created as number | undefined) ?? Math.floor(Date.now() / 1000);
  const finish = choice?.finish_reason ?? 'stop';
  if (job.kind === 'completion') {
    return {
      id,
      object: 'text_completion',
      created,
      model: job.model,
      choices: [{ index: 0, text: '', finish_reason: finish }],
      usage,
    };
  }
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model: job.model,
    choices: [{ index: 0, delta: {}, finish_reason: finish }],
    usage,
  };
}

/** A node's job error as the API error the client sees. */
export function mapJobError(error: JobError): ApiError {
  if (error.code === 'job_timeout') return new ApiError('provider_timeout');
  // Every candidate was busy or leaving: the network is at capacity now, not broken.
  if (error.code === 'overloaded' || error.code === 'draining') {
    return new ApiError(
      'no_provider_available',
      'Every provider of this model is at capacity; retry shortly.',
      {
        retryAfterS: 1,
      },
    );
  }
  if (error.code === 'invalid_request') {
    return new ApiError(
      'invalid_request',
      `The provider refused the request: ${error.message.slice(0, 200)}`,
    );
  }
  return new ApiError('provider_error', `The provider failed (${error.code}).`);
}

/** A fresh request id (also sent as the x-request-id header). */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}
