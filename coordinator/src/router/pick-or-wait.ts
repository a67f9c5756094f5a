/** A request's candidates: picked now, or after a wait in the router's queue when all are full. */
import { ApiError } from '../errors.js';
import { isVoiceKind } from '../ledger/media-units.js';
import { canContinueOn } from './continuation.js';
import { modelNotFound, servesKind } from './find-model.js';
import type { Entry, PickIndex, PickResult } from './pick-index.js';
import type { InferenceJob, RouteDeps } from './types.js';

/** The answer to a pick that found nobody. */
export function pickError(
  index: PickIndex,
  pick: Extract<PickResult, { ok: false }>,
  model: string,
): ApiError {
  // The model's last node left between findModel and the pick.
  if (pick.reason === 'model_not_found') return modelNotFound(index, model);
  const parts = Object.entries(pick.excluded).map(([reason, n]) => `${n} excluded by ${reason}`);
  return new ApiError(
    'no_provider_available',
    `No provider can take this request for "${model}" now: ${parts.join(', ') || 'no candidates'}.`,
    { param: pick.excluded.max_price ? 'provider.max_price' : null, retryAfterS: 1 },
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
      limit: deps.settings.maxAttempts,
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
