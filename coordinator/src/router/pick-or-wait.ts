/** A request's candidates: picked now, or after a wait in the router's queue when all are full. */
import { ApiError } from '../errors.js';
import { isVoiceKind } from '../pricing/media-units.js';
import { canContinueOn } from './continuation.js';
import { modelNotFound, servesKind } from './find-model.js';
import {
  type Entry,
  EXCLUSION_REASONS,
  type ExclusionReason,
  type PickIndex,
  type PickResult,
} from './pick-index.js';
import { AFFINITY_EXTRA_CANDIDATES } from './prefer-prefix.js';
import type { InferenceJob, RouteDeps } from './types.js';

/** The exclusions the request's own `provider` filters make, with the member each names. */
const PREFERENCE_PARAMS: Readonly<Partial<Record<ExclusionReason, string>>> = {
  [EXCLUSION_REASONS.maxPrice]: 'provider.max_price',
  [EXCLUSION_REASONS.order]: 'provider.order',
  [EXCLUSION_REASONS.only]: 'provider.only',
  [EXCLUSION_REASONS.ignore]: 'provider.ignore',
  [EXCLUSION_REASONS.quantization]: 'provider.quantizations',
};

/**
 * The answer to a pick that found nobody: 503 with Retry-After. When the request's own `provider`
 * filters left out every node of the model (no node was busy, leaving or tried), OpenRouter's
 * base URL answers as OpenRouter does, 404 `no_matching_provider`: waiting will not change it.
 */
export function pickError(
  index: PickIndex,
  pick: Extract<PickResult, { ok: false }>,
  model: string,
): ApiError {
  // The model's last node left between findModel and the pick.
  if (pick.reason === 'model_not_found') return modelNotFound(index, model);
  const reasons = Object.keys(pick.excluded) as ExclusionReason[];
  const parts = reasons.map((reason) => `${pick.excluded[reason]} excluded by ${reason}`);
  const filtered = reasons.length > 0 && reasons.every((reason) => PREFERENCE_PARAMS[reason]);
  const param = reasons.map((reason) => PREFERENCE_PARAMS[reason]).find(Boolean) ?? null;
  const why = parts.join(', ') || 'no candidates';
  if (filtered)
    return new ApiError(
      'no_provider_available',
      `No endpoints found matching the provider preferences for "${model}": ${why}.`,
      { param, retryAfterS: 1, openRouterCode: 'no_matching_provider' },
    );
  return new ApiError(
    'no_provider_available',
    `No provider can take this request for "${model}" now: ${why}.`,
    {
      param,
      retryAfterS: 1,
    },
  );
}

/**
 * The request's candidates, never a node it already tried. When every node that could take it is
 * at capacity — or others already wait for this model, whose turn comes first — it waits in the
 * router's queue (wait-queue.ts) and picks again when woken; 503 with Retry-After once the queue's
 * wait is over. `wait: false` (a hedge) takes what is free now, if anything.
 */
export async function pickOrWait(
  deps: RouteDeps,
  job: InferenceJob,
  tried: ReadonlySet<string>,
  options: { deadline: number; front: boolean; wait: boolean },
): Promise<readonly Entry[]> {
  const { queue, index } = deps.router;
  const pickNow = () => {
    // A voice model's nodes may serve different voice kinds: those that don't serve this one are out.
    const exclude = new Set(tried);
    if (isVoiceKind(job.kind)) {
      for (const entry of index.offers(job.model)?.values() ?? [])
        if (!servesKind(entry, job.kind)) exclude.add(entry.node.nodeId);
    }
    // A continued answer goes only to nodes that continue answers, with the same weights.
    const { continuation } = job;
    if (continuation) {
      for (const entry of index.offers(job.model)?.values() ?? [])
        if (!canContinueOn(entry, continuation)) exclude.add(entry.node.nodeId);
    }
    return index.pick({
      modelId: job.model,
      ...(job.provider ? { provider: job.provider } : {}),
      limit:
        deps.settings.maxAttempts + (job.prefixKeys && deps.router.affinity ? AFFINITY_EXTRA_CANDIDATES : 0),
      exclude,
    });
  };
  const client = job.keyId ?? job.userId;
  let pick = options.wait && queue.waiting(job.model) > 0 && !options.front ? undefined : pickNow();
  let woken = options.front;
  while (!pick?.ok) {
    if (!options.wait) return [];
    if (pick && !(pick.reason === 'no_provider_available' && (pick.excluded.at_capacity ?? 0) > 0))
      throw pickError(index, pick, job.model);
    woken = await queue.wait(job.model, client, options.deadline, woken);
    if (!woken) throw stayedAtCapacity(job.model);
    pick = pickNow();
  }
  return pick.candidates;
}

export function stayedAtCapacity(model: string): ApiError {
  return new ApiError(
    'no_provider_available',
    `Every provider of "${model}" stayed at capacity while this request waited; retry shortly.`,
    { retryAfterS: 1 },
  );
}
