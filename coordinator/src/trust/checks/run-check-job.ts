/**
 * One job of a check (canary-runner.ts) on a node connected here — a canary, or a verify job — or
 * a verify job on the coordinator's own verifier; its answer, or why there is none.
 */
import { randomUUID } from 'node:crypto';
import type { Hub } from '../../hub/hub.js';
import type { JobError, JobSpec, JobTokenIds, JobUsage } from '../../router/jobs.js';
import type { Entry } from '../../router/pick-index.js';
import type { Router, Slot } from '../../router/router.js';
import type { LocalVerifier } from './local-verifier.js';

/** How long a check waits for a slot on a full node before it gives up (a client waits as long). */
const CLAIM_WAIT_MS = 10_000;
const CLAIM_POLL_MS = 50;

export type CheckAnswer = {
  response: Record<string, unknown> & { usage: JobUsage };
  tokenIds: JobTokenIds | undefined;
  chunks: Record<string, unknown>[];
};

/** An answer (with a stream's chunks); skipped; or rejected: the token ids can't be evaluated. */
export type CheckRun =
  | { answer: CheckAnswer; jobId: string }
  | { skipped: string }
  | { rejected: string; jobId: string };

export type CheckJobDeps = { hub: Pick<Hub, 'index'>; router: Pick<Router, 'claim' | 'dispatch'> };

/** Runs one job on `entry`'s node; an answer (with a stream's chunks), or why not. */
export async function runCheckJob(deps: CheckJobDeps, entry: Entry, spec: JobSpec): Promise<CheckRun> {
  const slot = await claimSlot(deps, entry);
  if (!slot) return { skipped: `the node had no free slot for ${CLAIM_WAIT_MS / 1000} s` };
  const chunks: Record<string, unknown>[] = [];
  return new Promise((resolve) => {
    const handle = deps.router.dispatch(slot, spec, {
      onChunk: (chunk) => {
        chunks.push(chunk);
      },
      onResult: (response, tokenIds) =>
        resolve({ answer: { response, tokenIds, chunks }, jobId: handle.jobId }),
      onError: (error: JobError) => {
        const rejected = spec.kind === 'verify' ? refusal(error.protocolCode ?? error.code) : undefined;
        resolve(
          rejected ? { rejected, jobId: handle.jobId } : { skipped: `${error.code}: ${error.message}` },
        );
      },
    });
  });
}

/** A verify job on the coordinator's own verifier. */
export async function runLocalVerify(
  local: LocalVerifier | undefined,
  model: string,
  request: Record<string, unknown>,
): Promise<CheckRun> {
  if (!local) return { skipped: 'the coordinator verifier is not loaded' };
  const jobId = `local-${randomUUID()}`;
  try {
    const response = (await local.verify(model, request)) as CheckAnswer['response'];
    return { answer: { response, tokenIds: undefined, chunks: [] }, jobId };
  } catch (error) {
    const rejected = refusal((error as { code?: unknown }).code);
    if (rejected) return { rejected, jobId };
    return { skipped: `the coordinator verifier failed: ${(error as Error).message}` };
  }
}

/** A verifier's error code that says the token ids can't be evaluated on its weights, as a reason; else undefined. */
function refusal(code: unknown): string | undefined {
  return code === 'invalid_request' || code === 'context_length_exceeded'
    ? `the token ids can't be evaluated: ${code}`
    : undefined;
}

/**
 * A slot of `entry`'s model on its node, waiting (like a client's request would) while the node is
 * full or briefly away; the entry is looked up again each time, since a reconnect re-indexes it.
 */
async function claimSlot({ hub, router }: CheckJobDeps, entry: Entry): Promise<Slot | undefined> {
  const deadline = performance.now() + CLAIM_WAIT_MS;
  for (;;) {
    const node = hub.index.node(entry.node.nodeId);
    const now = node && [...node.entries.values()].find((e) => e.offer.modelId === entry.offer.modelId);
    const slot = now ? router.claim(now) : undefined;
    if (slot || performance.now() >= deadline) return slot;
    await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
  }
}
