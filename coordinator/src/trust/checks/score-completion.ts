/**
 * A checked completion scored by one verifier (canary-runner.ts): its token ids re-run
 * teacher-forced under the job's own sampling settings, on a network node (paid from the platform's
 * income) or on the coordinator's own verifier, and judged (judge.ts).
 */
import type { Store } from '../../db/store.js';
import type { Entry } from '../../router/pick-index.js';
import { type Claims, failedCheck, judge } from './judge.js';
import type { LocalVerifier } from './local-verifier.js';
import { payFromPlatform } from './pay-from-platform.js';
import { type CheckJobDeps, runCheckJob, runLocalVerify } from './run-check-job.js';
import { samplingOf } from './sampling-of.js';
import type { Scored, Verifier } from './verifier.js';

export type ScoreDeps = CheckJobDeps & {
  store: Store;
  settings: { topK: number; maxVerifyFeeNano: bigint };
  jobTimeoutMs: number;
  clock: { now(): number };
  /** The coordinator's own verifier, if loaded. */
  local: LocalVerifier | undefined;
};

/** One verify job for `target`'s completion on `verifier` (a network node is paid for it), judged. */
export async function scoreCompletion(
  deps: ScoreDeps,
  target: Entry,
  verifier: Verifier,
  claims: Claims,
): Promise<Scored | { skipped: string }> {
  const { settings, store, clock } = deps;
  const ids = claims.tokenIds!;
  const request = verifyRequest(claims, settings.topK, target.offer.sha256);
  const checked =
    'local' in verifier
      ? await runLocalVerify(deps.local, verifier.local, request)
      : await runCheckJob(deps, verifier, {
          kind: 'verify',
          model: verifier.offer.nodeModelId ?? verifier.offer.modelId,
          request,
          stream: false,
          timeoutMs: deps.jobTimeoutMs,
        });
  if ('rejected' in checked) {
    // The verifier says the ids can't be evaluated on these weights: a failing verdict (confirmed like any).
    return {
      verifier,
      judgement: failedCheck(checked.rejected, ids.completion.length),
      jobId: checked.jobId,
    };
  }
  if ('skipped' in checked) return { skipped: `verifier: ${checked.skipped}` };
  const judgement = judge(checked.answer.response, claims);
  if (!judgement) return { skipped: 'the verifier answered out of protocol' };
  if (!('local' in verifier)) {
    // Paid per evaluated token at the cheaper of its and the target's input price, capped per job.
    const evaluated = Math.min(
      checked.answer.response.usage.prompt_tokens,
      ids.prompt.length + ids.completion.length,
    );
    // biome-ignore lint/complexity/useMathMinMax: bigint (Math.min takes numbers)
    const price = verifier.priceInNano < target.priceInNano ? verifier.priceInNano : target.priceInNano;
    const fee = (BigInt(evaluated) * price) / 1_000_000n;
    await payFromPlatform(store, {
      to: verifier.node.owner ?? verifier.node.nodeId,
      amountNano: fee < settings.maxVerifyFeeNano ? fee : settings.maxVerifyFeeNano,
      ref: `verify:${checked.jobId}`,
      now: clock.now(),
    });
  }
  if ('local' in verifier) {
    const sampled = checked.answer.response.sampled_logprobs as (number | null)[];
    return { verifier, judgement, jobId: checked.jobId, sampledLogprobs: sampled };
  }
  return { verifier, judgement, jobId: checked.jobId };
}

/**
 * The verify job's request for a checked completion: its ids under the job's own sampling
 * settings, on the weights of `sha256` — the verifier must hold the claimed weights, not just a
 * model of the same id (protocol v0.1).
 */
export function verifyRequest(
  claims: Claims,
  topK: number,
  sha256: string | undefined,
): Record<string, unknown> {
  const ids = claims.tokenIds!;
  return {
    promptTokenIds: ids.prompt,
    completionTokenIds: ids.completion,
    topK,
    sampling: samplingOf(claims.request),
    ...(sha256 ? { sha256 } : {}),
  };
}
