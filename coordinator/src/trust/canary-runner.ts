/**
 * Checks of what nodes serve (NODE_PROTOCOL.md §9 "Verification"). Canaries: at random times
 * (exponential gaps, mean `trust.canaryIntervalMs` per node, from admission) the coordinator sends
 * each verifiable node a job shaped like the model's recent client traffic (make-canary.ts), paid
 * from the platform's fee income like any job. Spot checks: a share (`trust.spotCheckRate`) of live
 * client completions. Either way the node's claims must hold together (trust/judge.ts) and its
 * token ids are scored teacher-forced, under the job's own sampling settings, by a verifier picked
 * at random among the network nodes holding the same weights (role `network`, scope `verify`), or
 * by the coordinator itself; failing verdicts and a sample of passing ones get a second opinion.
 * The verdict moves the node's standing (trust-store.ts). Nodes connected to this replica only.
 */
import { randomUUID } from 'node:crypto';
import { MAX_CHECKS_PER_NODE_DAY } from '@gpumesh/protocol';
import type { Store } from '../db/store.js';
import type { Hub } from '../hub/hub.js';
import type { JobError, JobSpec, JobTokenIds, JobUsage } from '../hub/jobs.js';
import { computeCost } from '../ledger/charges.js';
import { deliveredText, streamedText } from '../router/delivered-text.js';
import type { Entry } from '../router/pick-index.js';
import type { Router, Slot } from '../router/router.js';
import type { CheckedJob } from '../router/types.js';
import { type Claims, failedCheck, type Judgement, judge, precheck } from './judge.js';
import type { LocalVerifier } from './local-verifier.js';
import { type Canary, makeCanary } from './make-canary.js';
import { payFromPlatform } from './pay-from-platform.js';
import type { Probation } from './probation.js';
import { samplingOf } from './sampling-of.js';
import { TrafficShapes } from './traffic-shapes.js';
import { recordVerification, type Standing } from './trust-store.js';

export type TrustSettings = {
  canaryIntervalMs: number;
  topK: number;
  passesToTrust: number;
  spotCheckRate: number;
  /** Share of passing verdicts put to a second verifier too. */
  secondOpinionRate: number;
  /** The most a network verifier is paid for one verify job (1e-9 USD). */
  maxVerifyFeeNano: bigint;
  slashBps: number;
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
  /** Told each node's standing after a verification. */
  probation?: Probation;
  /** The shapes of recent client traffic canaries copy (make-canary.ts); none recorded: a default mix. */
  shapes?: TrafficShapes;
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

/** The id verifications name when the coordinator itself verified. */
export const COORDINATOR_VERIFIER_ID = 'coordinator';

/** Who scores a completion: a network node's entry, or the coordinator's own verifier (local-verifier.ts). */
export type Verifier = Entry | { local: string };

function verifierIdOf(verifier: Verifier): string {
  return 'local' in verifier ? COORDINATOR_VERIFIER_ID : verifier.node.nodeId;
}

export type CanaryOutcome =
  | { status: 'verified'; judgement: Judgement; standing: Standing; jobId: string }
  | { status: 'skipped'; reason: string };

/** What a checked job was and what came of it. */

/** How long a canary waits for a slot on a full node before it gives up (a client waits as long). */
const CLAIM_WAIT_MS = 10_000;
const CLAIM_POLL_MS = 50;
const DAY_MS = 86_400_000;

type Answer = {
  response: Record<string, unknown> & { usage: JobUsage };
  tokenIds: JobTokenIds | undefined;
  chunks: Record<string, unknown>[];
};
type Scored = { verifier: Verifier; judgement: Judgement; jobId: string };

export class CanaryRunner {
  readonly #deps: CanaryDeps;
  readonly #random: () => number;
  readonly #shapes: TrafficShapes;
  readonly #due = new Map<string, number>();
  readonly #running = new Set<string>();
  readonly #checksToday = new Map<string, { day: number; count: number }>();
  #timer: NodeJS.Timeout | undefined;
  #local: LocalVerifier | undefined;

  /** Share of live completions verified; `trust.spotCheckRate` at start. */
  spotCheckRate: number;

  constructor(deps: CanaryDeps) {
    this.#deps = deps;
    this.spotCheckRate = deps.settings.spotCheckRate;
    this.#random = deps.random ?? Math.random;
    this.#shapes = deps.shapes ?? new TrafficShapes();
  }

  /** Starts the timer (when canaries are on); each node's first canary comes after a random gap. */
  start(): void {
    const mean = this.#deps.settings.canaryIntervalMs;
    if (mean <= 0 || this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), Math.max(50, Math.min(1_000, mean / 4))).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
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

  /**
   * Who can verify `target`'s model: the nodes connected here other than `target`'s (and those in `except`),
   * role `network` with scope `verify`, not suspended, holding the same weights (manifest sha256);
   * and the coordinator's own verifier when it holds them (`{ local }`, last). Chat and text only.
   */
  verifiersFor(target: Entry, except: readonly string[] = []): Verifier[] {
    const sha = target.offer.sha256;
    if (!sha || (target.offer.family !== 'chat' && target.offer.family !== 'text')) return [];
    const out: Verifier[] = [];
    for (const v of this.#deps.hub.index.nodes()) {
      if (v.via || v.nodeId === target.node.nodeId || except.includes(v.nodeId)) continue;
      if (v.state === 'suspended' || !v.scopes.has('verify')) continue;
      if (this.#deps.hub.session(v.nodeId)?.role !== 'network') continue;
      const entry = [...v.entries.values()].find((e) => e.offer.sha256 === sha);
      if (entry) out.push(entry);
    }
    const local = this.#local?.modelFor(sha);
    if (local) out.push({ local });
    return out;
  }

  /** A verifier picked at random among the network ones (a liar can't be sure to be picked); else the coordinator. */
  #pick(
    target: Entry,
    options: { except?: readonly string[]; localOnly?: boolean; preferLocal?: boolean } = {},
  ): Verifier | undefined {
    const all = this.verifiersFor(target, options.except);
    const local = all.find((v) => 'local' in v);
    if (options.localOnly || (options.preferLocal && local)) return local;
    const network = all.filter((v) => !('local' in v));
    return network.length > 0 ? network[Math.floor(this.#random() * network.length)] : local;
  }

  #tick(): void {
    const now = this.#deps.clock.now();
    const mean = this.#deps.settings.canaryIntervalMs;
    for (const target of this.targets()) {
      const id = target.node.nodeId;
      const due = this.#due.get(id);
      if (due === undefined) {
        this.#due.set(id, now + this.#gap(mean));
        continue;
      }
      if (now < due || this.#running.has(id)) continue;
      this.#due.set(id, now + this.#gap(mean));
      this.#running.add(id);
      this.runOnce(target)
        .catch((err: unknown) => this.#deps.log.warn({ err, nodeId: id }, 'canary failed'))
        .finally(() => this.#running.delete(id));
    }
  }

  /** Exponential gap with this mean: canaries arrive as a Poisson process, unpredictable. */
  #gap(mean: number): number {
    return Math.round(-Math.log(1 - this.#random()) * mean);
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
      makeCanary(this.#shapes, modelId, this.#random, {
        defaultMaxTokens: Math.min(
          this.#deps.maxTokensCap ?? Number.POSITIVE_INFINITY,
          target.offer.contextLength,
        ),
      });
    const generated = await this.#run(target, {
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
    if (job.kind !== 'chat' && job.kind !== 'completion') return undefined;
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
   * other verifiers (#settle).
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
    const broken = precheck(claims);
    if (broken) {
      const standing = await this.#record(target, {
        verifierId: COORDINATOR_VERIFIER_ID,
        jobId: job.jobId,
        verifyJobId: `precheck-${job.jobId}`,
        judgement: failedCheck(broken, claims.tokenIds?.completion.length ?? 0),
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
        : await this.#settle(target, claims, first, source);
    if ('skipped' in verdict) return { status: 'skipped', reason: verdict.skipped };
    const standing = await this.#record(target, {
      verifierId: verifierIdOf(verdict.verifier),
      jobId: job.jobId,
      verifyJobId: verdict.jobId,
      judgement: verdict.judgement,
      source,
    });
    return { status: 'verified', judgement: verdict.judgement, standing, jobId: job.jobId };
  }

  /**
   * A network verifier's verdict put to others: a second verifier (the coordinator when it holds
   * the weights, else another network node at random). Agreeing, it stands. Disagreeing, the
   * coordinator's own word decides; two network nodes need a third (the coordinator, or another
   * node) and the majority decides. Whoever the decision overrules has failed a check of its own
   * (it misjudged the weights it claims). No one to decide: a failing verdict is dropped, a passing
   * one stands.
   */
  async #settle(
    target: Entry,
    claims: Claims,
    first: Scored,
    source: 'canary' | 'spot',
  ): Promise<Scored | { skipped: string }> {
    const asked = [first];
    const unsettled = (reason: string) => (first.judgement.passed ? first : { skipped: reason });
    for (;;) {
      const except = asked.flatMap((o) => ('local' in o.verifier ? [] : [o.verifier.node.nodeId]));
      const other = this.#pick(target, { except, preferLocal: true });
      if (!other) return unsettled('no further verifier to settle the verdict');
      const next = await this.#score(target, other, claims);
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
        await this.#record(wrong.verifier, {
          verifierId: verifierIdOf(other),
          jobId: wrong.jobId,
          verifyJobId: next.jobId,
          judgement: failedCheck(`overruled by ${verifierIdOf(other)}: misjudged its own weights`),
          source,
        });
      }
      return (decided ? passes : fails).at(-1)!;
    }
  }

  #underDailyCap(nodeId: string): boolean {
    const day = Math.floor(this.#deps.clock.now() / DAY_MS);
    const seen = this.#checksToday.get(nodeId);
    const count = seen && seen.day === day ? seen.count + 1 : 1;
    this.#checksToday.set(nodeId, { day, count });
    return count <= MAX_CHECKS_PER_NODE_DAY;
  }

  /** One verify job for `target`'s completion on `verifier` (a network node is paid for it), judged. */
  async #score(target: Entry, verifier: Verifier, claims: Claims): Promise<Scored | { skipped: string }> {
    const { settings, store, clock } = this.#deps;
    const ids = claims.tokenIds!;
    // The verifier must hold the claimed weights, not just a model of the same id (protocol v0.1).
    const request = {
      promptTokenIds: ids.prompt,
      completionTokenIds: ids.completion,
      topK: settings.topK,
      sampling: samplingOf(claims.request),
      ...(target.offer.sha256 ? { sha256: target.offer.sha256 } : {}),
    };
    const checked =
      'local' in verifier
        ? await this.#runLocal(verifier.local, request)
        : await this.#run(verifier, {
            kind: 'verify',
            model: verifier.offer.nodeModelId ?? verifier.offer.modelId,
            request,
            stream: false,
            timeoutMs: this.#deps.jobTimeoutMs,
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
      const price = verifier.priceInNano < target.priceInNano ? verifier.priceInNano : target.priceInNano;
      const fee = (BigInt(evaluated) * price) / 1_000_000n;
      await payFromPlatform(store, {
        to: verifier.node.owner ?? verifier.node.nodeId,
        amountNano: fee < settings.maxVerifyFeeNano ? fee : settings.maxVerifyFeeNano,
        ref: `verify:${checked.jobId}`,
        now: clock.now(),
      });
    }
    return { verifier, judgement, jobId: checked.jobId };
  }

  /** Records a check of `entry`'s node and acts on its standing (suspended: disconnected). */
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
    const { settings, store, clock } = this.#deps;
    await this.#deps.settled?.();
    const standing = await recordVerification(
      store,
      {
        nodeId: entry.node.nodeId,
        model: entry.offer.modelId,
        sha256: entry.offer.sha256 ?? '',
        owner: entry.node.owner ?? undefined,
        now: clock.now(),
        ...v,
      },
      settings,
    );
    this.#deps.probation?.set(entry.node.nodeId, standing.status);
    if (standing.status === 'suspended' && standing.reason) {
      this.#deps.log.warn({ nodeId: entry.node.nodeId, reason: standing.reason }, 'node suspended');
      this.#deps.hub.suspend(entry.node.nodeId, standing.reason);
    }
    return standing;
  }

  /**
   * A slot of `entry`'s model on its node, waiting (like a client's request would) while the node is
   * full or briefly away; the entry is looked up again each time, since a reconnect re-indexes it.
   */
  async #claim(entry: Entry): Promise<Slot | undefined> {
    const { hub, router } = this.#deps;
    const deadline = performance.now() + CLAIM_WAIT_MS;
    for (;;) {
      const node = hub.index.node(entry.node.nodeId);
      const now = node && [...node.entries.values()].find((e) => e.offer.modelId === entry.offer.modelId);
      const slot = now ? router.claim(now) : undefined;
      if (slot || performance.now() >= deadline) return slot;
      await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
    }
  }

  /** A verify job on the coordinator's own verifier. */
  async #runLocal(
    model: string,
    request: Record<string, unknown>,
  ): Promise<{ answer: Answer; jobId: string } | { skipped: string } | { rejected: string; jobId: string }> {
    const local = this.#local;
    if (!local) return { skipped: 'the coordinator verifier is not loaded' };
    const jobId = `local-${randomUUID()}`;
    try {
      const response = (await local.verify(model, request)) as Answer['response'];
      return { answer: { response, tokenIds: undefined, chunks: [] }, jobId };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'invalid_request' || code === 'context_length_exceeded') {
        return { rejected: `the token ids can't be evaluated: ${code}`, jobId };
      }
      return { skipped: `the coordinator verifier failed: ${(error as Error).message}` };
    }
  }

  /** Runs one job on `entry`'s node; an answer (with a stream's chunks), or why not. */
  async #run(
    entry: Entry,
    spec: JobSpec,
  ): Promise<{ answer: Answer; jobId: string } | { skipped: string } | { rejected: string; jobId: string }> {
    const slot = await this.#claim(entry);
    if (!slot) return { skipped: `the node had no free slot for ${CLAIM_WAIT_MS / 1000} s` };
    const chunks: Record<string, unknown>[] = [];
    return new Promise((resolve) => {
      const handle = this.#deps.router.dispatch(slot, spec, {
        onChunk: (chunk) => {
          chunks.push(chunk);
        },
        onResult: (response, tokenIds) =>
          resolve({ answer: { response, tokenIds, chunks }, jobId: handle.jobId }),
        onError: (error: JobError) => {
          const code = error.protocolCode ?? error.code;
          if (spec.kind === 'verify' && (code === 'invalid_request' || code === 'context_length_exceeded')) {
            resolve({ rejected: `the token ids can't be evaluated: ${code}`, jobId: handle.jobId });
          } else resolve({ skipped: `${error.code}: ${error.message}` });
        },
      });
    });
  }
}
