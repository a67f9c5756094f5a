import type { Entry } from '../../router/pick-index.js';
import { failedCheck, type Judgement } from './judge.js';
import { type Scored, type Verifier, verifierIdOf } from './verifier.js';

export type SettleSteps = {
  /** Another verifier than the nodes in `except`: the coordinator when it holds the weights, else a network node at random. */
  pick(except: readonly string[]): Verifier | undefined;
  /** The completion scored by `verifier`. */
  score(verifier: Verifier): Promise<Scored | { skipped: string }>;
  /** Records a check of `entry`'s node: here, a verifier the decision overruled. */
  record(
    entry: Entry,
    check: { verifierId: string; jobId: string; verifyJobId: string; judgement: Judgement },
  ): Promise<unknown>;
};

/**
 * A network verifier's verdict put to others: a second verifier (the coordinator when it holds
 * the weights, else another network node at random). Agreeing, it stands. Disagreeing, the
 * coordinator's own word decides; two network nodes need a third (the coordinator, or another
 * node) and the majority decides. Whoever the decision overrules has failed a check of its own
 * (it misjudged the weights it claims). No one to decide: a failing verdict is dropped, a passing
 * one stands.
 */
export async function settleVerdict(
  first: Scored,
  steps: SettleSteps,
): Promise<Scored | { skipped: string }> {
  const asked = [first];
  const unsettled = (reason: string) => (first.judgement.passed ? first : { skipped: reason });
  for (;;) {
    const except = asked.flatMap((o) => ('local' in o.verifier ? [] : [o.verifier.node.nodeId]));
    const other = steps.pick(except);
    if (!other) return unsettled('no further verifier to settle the verdict');
    const next = await steps.score(other);
    if ('skipped' in next) return unsettled(`second opinion: ${next.skipped}`);
    asked.push(next);
    const passes = asked.filter((o) => o.judgement.passed);
    const fails = asked.filter((o) => !o.judgement.passed);
    // The coordinator's own verifier decides; else a strict majority of at least two.
    const decided =
      'local' in other
        ? next.judgement.passed
        : passes.length >= 2 && passes.length > fails.length
          ? true
          : fails.length >= 2 && fails.length > passes.length
            ? false
            : undefined;
    if (decided === undefined) continue;
    for (const wrong of decided ? fails : passes) {
      if ('local' in wrong.verifier) continue;
      await steps.record(wrong.verifier, {
        verifierId: verifierIdOf(other),
        jobId: wrong.jobId,
        verifyJobId: next.jobId,
        judgement: failedCheck(`overruled by ${verifierIdOf(other)}: misjudged its own weights`),
      });
    }
    return (decided ? passes : fails).at(-1)!;
  }
}
