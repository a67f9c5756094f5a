/** A request's next attempt: the best candidate not yet tried, its worst case held, its slot claimed. */
import { Attempt, type Race } from './attempt.js';
import { holdWorstCase, releaseHold } from './billing.js';
import type { Entry } from './index-entry.js';
import { pickOrWait, stayedAtCapacity } from './pick-or-wait.js';
import { preferPrefix } from './prefer-prefix.js';
import { spreadEquals } from './spread-equals.js';
import type { InferenceJob, RouteDeps, StreamSink } from './types.js';

/**
 * Starts an attempt on the best candidate not yet tried that has a free slot: holds its worst case
 * (402 when the balance can't cover it), then claims the slot. Candidates that filled up between
 * the pick and the claim (other requests took the last slots while this one awaited its hold) send
 * it back to the queue, at the head of its client's line. Undefined when no candidate could be
 * reached (or, with `wait: false`, none is free now).
 */
export async function startAttempt(
  deps: RouteDeps,
  job: InferenceJob,
  sink: StreamSink | undefined,
  race: Race,
  tried: Set<string>,
  options: { deadline: number; wait: boolean },
): Promise<Attempt | undefined> {
  for (let front = false; ; front = true) {
    if (front && performance.now() >= options.deadline) throw stayedAtCapacity(job.model);
    const picked = byPrefix(
      deps,
      job,
      spreadEquals(
        await pickOrWait(deps, job, tried, { ...options, front }),
        job.model,
        job.provider,
        deps.router.recentPicks,
      ),
    );
    const candidates = deps.probation ? deps.probation.order(job.model, picked) : picked;
    let full = false;
    for (const entry of candidates) {
      if (!deps.router.index.hasRoom(entry)) {
        full = true;
        continue;
      }
      if (!deps.router.reachable(entry)) continue;
      const hold = await holdWorstCase(deps, job, entry);
      // The slot is taken only now, checked and taken in one step: requests that picked the node at
      // once and then awaited their holds can't send it more jobs than its slots.
      const slot = deps.router.claim(entry);
      if (!slot) {
        full = true;
        await releaseHold(deps, hold);
        continue;
      }
      tried.add(entry.node.nodeId);
      deps.probation?.note(job.model, entry.node.nodeId);
      deps.router.recentPicks.note(job.model, entry.node.nodeId);
      return new Attempt(deps, slot, hold, job, race, sink);
    }
    if (!full || !options.wait) return undefined;
  }
}

/**
 * A chat job's candidates with the node holding its longest prefix first, when prefix affinity is
 * on (prefer-prefix.ts): held by what this coordinator sent it, or (ties only) by what it says it caches.
 */
function byPrefix(deps: RouteDeps, job: InferenceJob, picked: readonly Entry[]): readonly Entry[] {
  const { affinity, sentPrefixes, recentPicks } = deps.router;
  const keys = job.prefixKeys;
  if (!affinity || !keys || job.continuation || picked.length < 2) return picked;
  const now = deps.clock.now();
  return preferPrefix(
    picked,
    {
      kind: job.kind,
      promptTokens: job.promptTokensBound,
      completionTokens: job.maxTokens * job.choices,
      provider: job.provider,
    },
    {
      sent: (entry) => sentPrefixes.held(entry.node.nodeId, keys, now),
      continues: (entry) => sentPrefixes.continues(entry.node.nodeId, keys, now),
      said: (entry) => {
        const said = entry.node.prefixCache.get(entry.offer.modelId);
        if (said) for (let i = keys.length - 1; i >= 0; i--) if (said.has(keys[i]!)) return i;
        return -1;
      },
      cachedBound: (entry) => sentPrefixes.bound(entry.node.nodeId, keys, now, job.userId),
      shareOf: (entry) => recentPicks.shareOf(job.model, entry.node.nodeId),
    },
    affinity,
  );
}
