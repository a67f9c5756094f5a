/**
 * Checks of what nodes serve (NODE_PROTOCOL.md §9 "Verification"). Canaries: at random times
 * (exponential gaps, mean `trust.canaryIntervalMs` per node, from admission) the coordinator sends
 * each verifiable node a job shaped like the model's recent client traffic (make-canary.ts), paid
 * from the platform's fee income like any job. Spot checks: a share (`trust.spotCheckRate`) of live
 * client completions. Either way the node's claims must hold together (trust/checks/judge.ts) and its
 * token ids are scored teacher-forced, under the job's own sampling settings, by a verifier picked
 * at random among the network nodes holding the same weights (role `network`, scope `verify`), or
 * by the coordinator itself; failing verdicts and a sample of passing ones get a second opinion.
 * The verdict moves the node's standing, and may suspend it (standing/suspensions.ts). Nodes
 * connected to this replica only.
 */
import { MAX_CHECKS_PER_NODE_DAY } from '@gpumesh/protocol/internal';
import type { Catalog } from '../../catalog/catalog.js';
import type { Store } from '../../db/store.js';
import type { Hub } from '../../hub/hub.js';
import { computeCost } from '../../pricing/price.js';
import { deliveredText, streamedText } from '../../router/delivered-text.js';
import type { Entry } from '../../router/pick-index.js';
import type { Router } from '../../router/router.js';
import type { CheckedJob } from '../../router/types.js';
import { type Canary, makeCanary } from '../canaries/make-canary.js';
import type { ReplayPool } from '../canaries/replay-pool.js';
import { TrafficShapes } from '../canaries/traffic-shapes.js';
import type { Standing } from '../standing/standings.js';
import type { Suspensions } from '../standing/suspensions.js';
import { CanaryTimer } from './canary-timer.js';
import { type Claims, checkableRequest, failedCheck, type Judgement, precheck } from './judge.js';
import type { LocalVerifier } from './local-verifier.js';
import { payFromPlatform } from './pay-from-platform.js';
import { runCheckJob } from './run-check-job.js';
import { scoreCompletion, verifyRequest } from './score-completion.js';
import { settleVerdict } from './settle-verdict.js';
import { type Substitute, substitutionRatios } from './substitution-ratio.js';
import {
  COORDINATOR_VERIFIER_ID,
  pickVerifier,
  type Scored,
  type Verifier,
  verifierIdOf,
  verifiersFor,
} from './verifier.js';

export type TrustSettings = {
  canaryIntervalMs: number;
  topK: number;
  spotCheckRate: number;
  /** Share of passing verdicts put to a second verifier too. */
  secondOpinionRate: number;
  /** The most a network verifier is paid for one verify job (1e-9 USD). */
  maxVerifyFeeNano: bigint;
};

export type CanaryDeps = {
  hub: Hub;
  router: Router;
  store: Store;
  settings: TrustSettings;
  platformFeeBps: number;
  jobTimeoutMs: number;
  clock: { now(): number };
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /**
   * The cheaper quantizations the catalog pins for claimed weights: each the coordinator's verifier
   * holds adds a substitution statistic to the node's checks (substitution-ratio.ts). None: today's alone.
   */
  catalog?: Pick<Catalog, 'cheaperThan'>;
  /** Where each verdict goes: the node's standing, and its suspension (standing/suspensions.ts). */
  suspensions: Suspensions;
  /** The shapes of recent client traffic canaries copy (make-canary.ts); none recorded: a default mix. */
  shapes?: TrafficShapes;
  /** Recent shareable client jobs, replayed as canaries before any is made (replay-pool.ts). */
  replays?: ReplayPool;
  /** The router's max_tokens for a request that names none (router.maxTokensCap): a default-mix canary's. */
  maxTokensCap?: number;
  /** Uniform in [0, 1); Math.random by default (a seeded one in tests). */
  random?: () => number;
  /**
   * Resolves once the jobs billed so far are written (the ledger's queue): a check may convict,
   * and a conviction refunds the node's jobs it finds written.
   */
  settled?: () => Promise<void>;
};

export type CanaryOutcome =
  | { status: 'verified'; judgement: Judgement; standing: Standing; jobId: string }
  | { status: 'skipped'; reason: string };

/** The claimed file (its hash, the coordinator verifier's model for it) and its substitutes there. */
type Substitutes = { sha256: string; claimed: string; substitutes: Substitute[] };

const DAY_MS = 86_400_000;

export class CanaryRunner {
  readonly #deps: CanaryDeps;
  readonly #random: () => number;
  readonly #shapes: TrafficShapes;
  readonly #checksToday = new Map<string, { day: number; count: number }>();
  readonly #timer: CanaryTimer;
  #local: LocalVerifier | undefined;

  /** Share of live completions verified; `trust.spotCheckRate` at start. */
  spotCheckRate: number;

  constructor(deps: CanaryDeps) {
    this.#deps = deps;
    this.spotCheckRate = deps.settings.spotCheckRate;
    this.#random = deps.random ?? Math.random;
    this.#shapes = deps.shapes ?? new TrafficShapes();
    this.#timer = new CanaryTimer({
      meanMs: () => deps.settings.canaryIntervalMs,
      clock: deps.clock,
      random: this.#random,
      targets: () => this.targets(),
      run: (target) => this.runOnce(target),
      log: deps.log,
    });
  }

  /** Starts the timer (when canaries are on); each node's first canary comes after a random gap. */
  start(): void {
    this.#timer.start();
  }

  stop(): void {
    this.#timer.stop();
  }

  /** The coordinator's own verifier, used for weights no network node holds. */
  setLocalVerifier(local: LocalVerifier | undefined): void {
    this.#local = local;
  }

  /** Each node connected here with a model some other node can verify (one model per node). */
  targets(): Entry[] {
    const out: Entry[] = [];
    for (const node of this.#deps.hub.index.nodes()) {
      if (node.via) continue;
      const target = [...node.entries.values()].find((e) => this.verifiersFor(e).length > 0);
      if (target) out.push(target);
    }
    return out;
  }

  /** Who can verify `target`'s model, the coordinator last (verifier.ts `verifiersFor`). */
  verifiersFor(target: Entry, except: readonly string[] = []): Verifier[] {
    return verifiersFor(this.#deps.hub, this.#local, target, except);
  }

  /** A verifier picked at random among the network ones (a liar can't be sure to be picked); else the coordinator. */
  #pick(
    target: Entry,
    options: { except?: readonly string[]; localOnly?: boolean; preferLocal?: boolean } = {},
  ): Verifier | undefined {
    return pickVerifier(this.verifiersFor(target, options.except), options, this.#random);
  }

  /** One canary to `target`, like its model's recent traffic; checked like a client's job. */
  async runOnce(
    target: Entry,
    { job, verifier }: { job?: Canary; verifier?: Verifier } = {},
  ): Promise<CanaryOutcome> {
    const { store, clock } = this.#deps;
    const modelId = target.offer.modelId;
    const canary =
      job ??
      this.#deps.replays?.take(modelId, target.node, clock.now()) ??
      makeCanary(this.#shapes, modelId, this.#random, {
        defaultMaxTokens: Math.min(
          this.#deps.maxTokensCap ?? Number.POSITIVE_INFINITY,
          target.offer.contextLength,
        ),
      });
    const generated = await runCheckJob(this.#deps, target, {
      kind: canary.kind,
      model: target.offer.nodeModelId ?? modelId,
      request: canary.request,
      stream: canary.stream,
      timeoutMs: this.#deps.jobTimeoutMs,
    });
    if (!('answer' in generated)) {
      return { status: 'skipped', reason: 'skipped' in generated ? generated.skipped : generated.rejected };
    }
    const { response, tokenIds, chunks } = generated.answer;
    // The canary is paid like a client's job (its provider share), from the platform's income.
    const cost = computeCost({
      promptTokens: response.usage.prompt_tokens,
      completionTokens: response.usage.completion_tokens,
      priceInNano: target.priceInNano,
      priceOutNano: target.priceOutNano,
      feeBps: this.#deps.platformFeeBps,
    });
    await payFromPlatform(store, {
      to: target.node.owner ?? target.node.nodeId,
      amountNano: cost.providerNano,
      ref: `canary:${generated.jobId}`,
      now: clock.now(),
    });
    return this.check(
      target,
      {
        kind: canary.kind,
        jobId: generated.jobId,
        request: canary.request,
        usage: response.usage,
        tokenIds,
        // A node may answer a stream request in one piece (the router streams it as one chunk).
        delivered: canary.stream && chunks.length > 0 ? streamedText(chunks) : deliveredText(response),
      },
      'canary',
      verifier,
    );
  }

  /**
   * Spot check of a live completion: with probability `trust.spotCheckRate`, checked like a canary
   * in the background (the client's answer does not wait). Returns the check, or undefined.
   */
  spotCheck(target: Entry, checked: () => CheckedJob): Promise<CanaryOutcome> | undefined {
    const rate = this.spotCheckRate;
    if (rate <= 0 || this.#random() >= rate) return undefined;
    const job = checked();
    if (!checkableRequest(job.kind, job.request)) return undefined;
    if (this.verifiersFor(target).length === 0) return undefined;
    const check = this.check(target, job, 'spot');
    check.catch((err: unknown) =>
      this.#deps.log.warn({ err, nodeId: target.node.nodeId }, 'spot check failed'),
    );
    return check;
  }

  /**
   * Checks one job `target` ran and records the verdict. Claims that don't hold together fail at
   * once. A network verifier's failing verdict, and a sample of its passing ones, are settled with
   * other verifiers (settle-verdict.ts).
   */
  async check(
    target: Entry,
    job: CheckedJob,
    source: 'canary' | 'spot',
    chosen?: Verifier,
  ): Promise<CanaryOutcome> {
    if (!this.#underDailyCap(target.node.nodeId)) {
      return { status: 'skipped', reason: `over ${MAX_CHECKS_PER_NODE_DAY} checks today` };
    }
    const claims: Claims = { ...job, kind: job.kind === 'chat' ? 'chat' : 'completion' };
    if (claims.usage.completion_tokens === 0 && (claims.tokenIds?.completion.length ?? 0) === 0) {
      return { status: 'skipped', reason: 'no completion tokens to check' };
    }
    const substitutes = this.#substitutesOf(target);
    const broken = precheck(claims);
    if (broken) {
      const failed = failedCheck(broken, claims.tokenIds?.completion.length ?? 0);
      const standing = await this.#record(target, {
        verifierId: COORDINATOR_VERIFIER_ID,
        jobId: job.jobId,
        verifyJobId: `precheck-${job.jobId}`,
        judgement: await this.#withSubstitution(failed, substitutes, claims),
        source,
      });
      return { status: 'verified', judgement: failedCheck(broken), standing, jobId: job.jobId };
    }
    const verifier = chosen ?? this.#pick(target, { localOnly: job.private });
    if (!verifier) return { status: 'skipped', reason: 'no verifier holds the weights' };
    const first = await this.#score(target, verifier, claims);
    if ('skipped' in first) return { status: 'skipped', reason: first.skipped };
    const sample = this.#random() < this.#deps.settings.secondOpinionRate;
    const verdict =
      'local' in verifier || (first.judgement.passed && !sample)
        ? first
        : await settleVerdict(first, {
            pick: (except) => this.#pick(target, { except, preferLocal: true }),
            score: (other) => this.#score(target, other, claims),
            record: (entry, check) => this.#record(entry, { ...check, source }),
          });
    if ('skipped' in verdict) return { status: 'skipped', reason: verdict.skipped };
    const judgement = await this.#withSubstitution(verdict.judgement, substitutes, claims, verdict);
    const standing = await this.#record(target, {
      verifierId: verifierIdOf(verdict.verifier),
      jobId: job.jobId,
      verifyJobId: verdict.jobId,
      judgement,
      source,
    });
    return { status: 'verified', judgement, standing, jobId: job.jobId };
  }

  /**
   * The cheaper quantizations of `target`'s claimed weights the coordinator's verifier holds, with
   * the claimed file itself (it scores p too); undefined when it holds none of them or not the claim.
   */
  #substitutesOf(target: Entry): Substitutes | undefined {
    const sha = target.offer.sha256;
    const local = this.#local;
    const claimed = sha ? local?.modelFor(sha) : undefined;
    if (!sha || !local || !claimed || !this.#deps.catalog) return undefined;
    const substitutes = this.#deps.catalog.cheaperThan(sha).flatMap((f) => {
      const model = local.modelFor(f.sha256);
      return model ? [{ ...f, model }] : [];
    });
    return substitutes.length > 0 ? { sha256: sha, claimed, substitutes } : undefined;
  }

  /**
   * `judgement` with the check's ln q/p for each substitute (substitution-ratio.ts): each the
   * judgement's own ln e-value when the check failed outright (the cap, in every statistic), 0 when
   * the statistic could not judge the tokens (a grammar shaped them).
   */
  async #withSubstitution(
    judgement: Judgement,
    of: Substitutes | undefined,
    claims: Claims,
    scored?: Scored,
  ): Promise<Judgement> {
    if (!of || !this.#local) return judgement;
    const each = (x: number) => Object.fromEntries(of.substitutes.map((s) => [s.quant, x]));
    if (judgement.failure !== undefined) return { ...judgement, substitution: each(judgement.logE) };
    if (!judgement.scored) return { ...judgement, substitution: each(0) };
    const request = verifyRequest(claims, this.#deps.settings.topK, of.sha256);
    const n = claims.tokenIds!.completion.length;
    const substitution = await substitutionRatios(this.#local, of.claimed, of.substitutes, request, {
      claimed: scored?.sampledLogprobs,
      from: Math.min(claims.scoredFrom ?? 0, n - 1),
    });
    return { ...judgement, substitution };
  }

  #underDailyCap(nodeId: string): boolean {
    const day = Math.floor(this.#deps.clock.now() / DAY_MS);
    const seen = this.#checksToday.get(nodeId);
    const count = seen && seen.day === day ? seen.count + 1 : 1;
    this.#checksToday.set(nodeId, { day, count });
    return count <= MAX_CHECKS_PER_NODE_DAY;
  }

  #score(target: Entry, verifier: Verifier, claims: Claims): Promise<Scored | { skipped: string }> {
    return scoreCompletion({ ...this.#deps, local: this.#local }, target, verifier, claims);
  }

  /** Records a check of `entry`'s node (a conviction suspends it, suspensions.ts). */
  async #record(
    entry: Entry,
    v: {
      verifierId: string;
      jobId: string;
      verifyJobId: string;
      judgement: Judgement;
      source: 'canary' | 'spot';
    },
  ): Promise<Standing> {
    await this.#deps.settled?.();
    return this.#deps.suspensions.recordCheck({
      nodeId: entry.node.nodeId,
      model: entry.offer.modelId,
      sha256: entry.offer.sha256 ?? '',
      owner: entry.node.owner ?? undefined,
      now: this.#deps.clock.now(),
      ...v,
    });
  }
}
