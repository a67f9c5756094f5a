/**
 * Who scores a checked completion (canary-runner.ts): a network node holding the same weights, or
 * the coordinator's own verifier (local-verifier.ts); and how one is picked.
 */
import type { Hub } from '../../hub/hub.js';
import type { Entry } from '../../router/pick-index.js';
import type { Judgement } from './judge.js';
import type { LocalVerifier } from './local-verifier.js';

/** The id verifications name when the coordinator itself verified. */
export const COORDINATOR_VERIFIER_ID = 'coordinator';

/** Who scores a completion: a network node's entry, or the coordinator's own verifier (local-verifier.ts). */
export type Verifier = Entry | { local: string };

/**
 * One verifier's verdict on a completion, and the id of the verify job it came from; the
 * coordinator's own verifier also gives its sampled log-probabilities (substitution-ratio.ts reuses them).
 */
export type Scored = {
  verifier: Verifier;
  judgement: Judgement;
  jobId: string;
  sampledLogprobs?: readonly (number | null)[];
};

/** The id a verification names its verifier by. */
export function verifierIdOf(verifier: Verifier): string {
  return 'local' in verifier ? COORDINATOR_VERIFIER_ID : verifier.node.nodeId;
}

/**
 * Who can verify `target`'s model: the nodes connected here other than `target`'s (and those in `except`),
 * role `network` with scope `verify`, not suspended, holding the same weights (manifest sha256);
 * and the coordinator's own verifier when it holds them (`{ local }`, last). Chat and text only.
 */
export function verifiersFor(
  hub: Pick<Hub, 'index' | 'session'>,
  local: LocalVerifier | undefined,
  target: Entry,
  except: readonly string[] = [],
): Verifier[] {
  const sha = target.offer.sha256;
  if (!sha || (target.offer.family !== 'chat' && target.offer.family !== 'text')) return [];
  const out: Verifier[] = [];
  for (const v of hub.index.nodes()) {
    if (v.via || v.nodeId === target.node.nodeId || except.includes(v.nodeId)) continue;
    if (v.state === 'suspended' || !v.scopes.has('verify')) continue;
    if (hub.session(v.nodeId)?.role !== 'network') continue;
    const entry = [...v.entries.values()].find((e) => e.offer.sha256 === sha);
    if (entry) out.push(entry);
  }
  const model = local?.modelFor(sha);
  if (model) out.push({ local: model });
  return out;
}

/**
 * One of `all` (verifiersFor): a network verifier picked at random (a liar can't be sure to be
 * picked), else the coordinator; the coordinator only (`localOnly`), or first when it can (`preferLocal`).
 */
export function pickVerifier(
  all: readonly Verifier[],
  options: { localOnly?: boolean | undefined; preferLocal?: boolean },
  random: () => number,
): Verifier | undefined {
  const local = all.find((v) => 'local' in v);
  if (options.localOnly || (options.preferLocal && local)) return local;
  const network = all.filter((v) => !('local' in v));
  return network.length > 0 ? network[Math.floor(random() * network.length)] : local;
}
