/** A job as the hub's callers and the node sessions see it: what to run and what comes back. */
import type { JobKind, ProtocolErrorCode } from '@gpumesh/protocol';

/** What a job's caller hears back. Exactly one of onResult / onError ends a job. */
export type JobHandlers = {
  /**
   * `tokens`: the completion tokens the chunk carries, when the node says (chunk.tokens);
   * `tokenIds`: their ids, when the node sends them (v0.4, what a continuation starts from).
   */
  onChunk?: (
    chunk: Record<string, unknown>,
    seq: number,
    tokens: number | undefined,
    tokenIds?: readonly number[],
  ) => void;
  /** `tokenIds`: the prompt and completion token ids, when the node sent them (for verification). */
  onResult: (response: Record<string, unknown> & { usage: JobUsage }, tokenIds?: JobTokenIds) => void;
  onError: (error: JobError) => void;
};

export type JobTokenIds = { prompt: number[]; completion: number[] };

export type JobUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

/**
 * Why a job failed. `code`: the node's code as it sent it (a registry code from a conforming node),
 * or the coordinator's own — `node_lost`: the session ended (closed, expired) while the job ran;
 * `provider_error`: the node (or the replica holding it) answered out of protocol.
 */
export type JobError = {
  code: string;
  /**
   * The registry code `code` reads as (NODE_PROTOCOL.md §10: an unknown code reads as
   * internal_error), from the protocol's readJobError. Set by the hub's sessions for every node
   * error and for their own timeouts and cancels; absent for `node_lost`, `provider_error` and errors
   * relayed from another replica.
   */
  protocolCode?: ProtocolErrorCode;
  message: string;
  retryable: boolean;
  /** What the node says the job used before it ended (the error frame's optional usage). */
  usage?: JobUsage;
};

export type JobSpec = {
  kind: JobKind;
  model: string;
  request: Record<string, unknown>;
  stream: boolean;
  timeoutMs: number;
  /** The answer so far, which the node continues (NODE_PROTOCOL.md §9 "Continuing an answer"). */
  continueFrom?: { text: string; tokenIds?: number[] };
};

/** A running job: cancel it when the client goes away. */
export type JobHandle = { readonly jobId: string; cancel(reason: string): void };
