/**
 * Canaries: at random times (exponential gaps, mean `trust.canaryIntervalMs` per node) the
 * coordinator sends each verifiable node a completion request shaped like client traffic — a
 * prompt from a corpus, ordinary sampling settings, paid from the platform's fee income like any
 * job — takes the token ids the node reports (result `tokenIds`), and has another node holding
 * the same weights (role `network`, scope `verify`, the same manifest sha256) score them teacher-
 * forced. The verdict moves the node's standing (trust-store.ts); a node whose verifications fail
 * is suspended and disconnected with the evidence. Nodes connected to this replica only; each
 * replica checks its own.
 */

import { randomUUID } from 'node:crypto';
import type { Store } from '../db/store.js';
import type { Hub } from '../hub/hub.js';
import type { JobError, JobSpec, JobTokenIds, JobUsage } from '../hub/jobs.js';
import { computeCost } from '../ledger/charges.js';
import type { Entry } from '../router/pick-index.js';
import type { Router, Slot } from '../router/router.js';
import { CANARY_PROMPTS } from './canary-prompts.js';
import { type Judgement, judge } from './judge.js';
import type { LocalVerifier } from './local-verifier.js';
import { payFromPlatform } from './pay-from-platform.js';
import type { Probation } from './probation.js';
import type { TrafficShapes } from './traffic-shapes.js';
import { recordVerification, type Standing } from './trust-store.js';

export type TrustSettings = {
  canaryIntervalMs: number;
  canaryMaxTokens: number;
  canaryTemperature: number;
  topK: number;
  minMeanLogprob: number;
  minTopKFraction: number;
  failuresToSuspend: number;
  passesToTrust: number;
  spotCheckRate: number;
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
  /** Uniform in [0, 1); Math.random by default (a seeded one in tests). */
  random?: () => number;
  /** Client jobs' shapes, that canaries are made like (make-canary.ts). */
  shapes?: TrafficShapes;
};

/** The id verifications name when the coordinator itself verified. */
export const COORDINATOR_VERIFIER_ID = 'coordinator';

function verifierIdOf(verifier: Verifier): string {
  return 'local' in verifier ? COORDINATOR_VERIFIER_ID : verifier.node.nodeId;
}

/** Who scores a completion: a network node's entry, or the coordinator's own verifier (local-verifier.ts). */
export type Verifier = Entry | { local: string };

export type CanaryOutcome =
  | { status: 'verified'; judgement: Judgement; standing: Standing; jobId: string }
  | { status: 'skipped'; reason: string };

/** How long a canary waits for a slot on a full node before it gives up (a client waits as long). */
const CLAIM_WAIT_MS = 10_000;
const CLAIM_POLL_MS = 50;

type Answer = { response: Record<string, unknown> & { usage: JobUsage }; tokenIds: JobTokenIds | undefined };

export class CanaryRunner {
  readonly #deps: CanaryDeps;
  readonly #random: () => number;
  readonly #due = new Map<string, number>();
  readonly #running = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #local: LocalVerifier | undefined;

  /** Share of live completions verified; `trust.spotCheckRate` at start. */
  spotCheckRate: number;

  constructor(deps: CanaryDeps) {
    this.#deps = deps;
    this.spotCheckRate = deps.settings.spotCheckRate;
    this.#random = deps.random ?? Math.random;
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

  /** Each node connected here with a model some other node can verify, and that verifier. */
  pairs(): { target: Entry; verifier: Verifier }[] {
    const out: { target: Entry; verifier: Verifier }[] = [];
    for (const node of this.#deps.hub.index.nodes()) {
      if (node.via) continue;
      for (const target of node.entries.values()) {
        const verifier = this.verifierFor(target);
        if (verifier) {
          out.push({ target, verifier });
          break; // one model per node per canary
        }
      }
    }
    return out;
  }

  /**
   * A node other than `target`'s that can verify its model: connected here, role `network` with
   * scope `verify`, not suspended, holding the same weights (manifest sha256); else the
   * coordinator's own verifier when it holds them. Chat and text only; never node `except`.
   */
  verifierFor(target: Entry, except?: string): Verifier | undefined {
    const sha = target.offer.sha256;
    if (!sha || (target.offer.family !== 'chat' && target.offer.family !== 'text')) return undefined;
    for (const v of this.#deps.hub.index.nodes()) {
      if (v.via || v.nodeId === target.node.nodeId || v.nodeId === except) continue;
      if (v.state === 'suspended' || !v.scopes.has('verify')) continue;
      if (this.#deps.hub.session(v.nodeId)?.role !== 'network') continue;
      const entry = [...v.entries.values()].find((e) => e.offer.sha256 === sha);
      if (entry) return entry;
    }
    const local = this.#local?.modelFor(sha);
    return local ? { local } : undefined;
  }

  #tick(): void {
    const now = this.#deps.clock.now();
    const mean = this.#deps.settings.canaryIntervalMs;
    for (const pair of this.pairs()) {
      const id = pair.target.node.nodeId;
      const due = this.#due.get(id);
      if (due === undefined) {
        this.#due.set(id, now + this.#gap(mean));
        continue;
      }
      if (now < due || this.#running.has(id)) continue;
      this.#due.set(id, now + this.#gap(mean));
      this.#running.add(id);
      this.runOnce(pair.target, pair.verifier)
        .catch((err: unknown) => this.#deps.log.warn({ err, nodeId: id }, 'canary failed'))
        .finally(() => this.#running.delete(id));
    }
  }

  /** Exponential gap with this mean: canaries arrive as a Poisson process, unpredictable. */
  #gap(mean: number): number {
    return Math.round(-Math.log(1 - this.#random()) * mean);
  }

  /** One canary to `target`, verified on `verifier`. */
  async runOnce(target: Entry, verifier: Verifier): Promise<CanaryOutcome> {
    const { settings, store, clock } = this.#deps;
    const base = CANARY_PROMPTS[Math.floor(this.#random() * CANARY_PROMPTS.length)]!;
    const prompt = this.#random() < 0.5 ? base : `${base} (${1 + Math.floor(this.#random() * 100)})`;
    const modelId = target.offer.modelId;
    const generated = await this.#run(target, {
      kind: 'completion',
      model: target.offer.nodeModelId ?? modelId,
      request: {
        model: modelId,
        prompt,
        max_tokens: settings.canaryMaxTokens,
        temperature: settings.canaryTemperature,
      },
      stream: false,
      timeoutMs: this.#deps.jobTimeoutMs,
    });
    if ('skipped' in generated) return { status: 'skipped', reason: generated.skipped };
    const usage = generated.answer.response.usage;
    // The canary is paid like a client's job (its provider share), from the platform's income.
    const cost = computeCost({
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
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
    return this.verifyCompletion(target, verifier, {
      jobId: generated.jobId,
      tokenIds: generated.answer.tokenIds,
      source: 'canary',
    });
  }

  /**
   * Spot check of a live completion: with probability `trust.spotCheckRate`, the token ids `target`
   * reported for client job `jobId` are verified on another node holding the same weights, in the
   * background (the client's answer does not wait). Returns the check, or undefined when none ran.
   */
  spotCheck(
    target: Entry,
    jobId: string,
    tokenIds: JobTokenIds | undefined,
  ): Promise<CanaryOutcome> | undefined {
    const rate = this.spotCheckRate;
    if (rate <= 0 || !tokenIds || this.#random() >= rate) return undefined;
    const verifier = this.verifierFor(target);
    if (!verifier) return undefined;
    const check = this.verifyCompletion(target, verifier, { jobId, tokenIds, source: 'spot' });
    check.catch((err: unknown) =>
      this.#deps.log.warn({ err, nodeId: target.node.nodeId }, 'spot check failed'),
    );
    return check;
  }

  /**
   * Scores `target`'s completion on `verifier` and records the verdict (canaries and spot checks).
   * A network verifier's "fail" convicts no one alone — a verifier lying about its weights would
   * otherwise get honest nodes slashed — so it is put to a second verifier (another network node
   * holding the weights, else the coordinator's own). If the second fails it too, the verdict
   * stands; if the second passes it, the target passes, and the first verifier has a failed
   * verification of its own: it misjudged the weights it claims. With no second opinion to be
   * had, the check is skipped.
   */
  async verifyCompletion(
    target: Entry,
    verifier: Verifier,
    {
      jobId,
      tokenIds: ids,
      source,
    }: { jobId: string; tokenIds: JobTokenIds | undefined; source: 'canary' | 'spot' },
  ): Promise<CanaryOutcome> {
    if (!ids || ids.completion.length === 0 || ids.prompt.length === 0) {
      return { status: 'skipped', reason: 'the node sent no token ids: unverifiable' };
    }
    const first = await this.#score(target, verifier, ids);
    if ('skipped' in first) return { status: 'skipped', reason: first.skipped };
    let verdict = first;
    if (!first.judgement.passed && !('local' in verifier)) {
      const other = this.verifierFor(target, verifier.node.nodeId);
      if (!other) return { status: 'skipped', reason: 'a failure no second verifier could confirm' };
      const second = await this.#score(target, other, ids);
      if ('skipped' in second) return { status: 'skipped', reason: `second opinion: ${second.skipped}` };
      if (second.judgement.passed) {
        await this.#record(verifier, {
          verifierId: verifierIdOf(other),
          jobId: first.jobId,
          verifyJobId: second.jobId,
          judgement: { ...first.judgement, passed: false },
          source,
        });
      }
      verdict = second;
    }
    const standing = await this.#record(target, {
      verifierId: verifierIdOf(verdict.verifier),
      jobId,
      verifyJobId: verdict.jobId,
      judgement: verdict.judgement,
      source,
    });
    return { status: 'verified', judgement: verdict.judgement, standing, jobId };
  }

  /** One verify job for `target`'s completion on `verifier` (a network node is paid for it), judged. */
  async #score(
    target: Entry,
    verifier: Verifier,
    ids: JobTokenIds,
  ): Promise<{ verifier: Verifier; judgement: Judgement; jobId: string } | { skipped: string }> {
    const { settings, store, clock } = this.#deps;
    // The verifier must hold the claimed weights, not just a model of the same id (protocol v0.1).
    const request = {
      promptTokenIds: ids.prompt,
      completionTokenIds: ids.completion,
      topK: settings.topK,
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
    if ('skipped' in checked) return { skipped: `verifier: ${checked.skipped}` };
    const judgement = judge(checked.answer.response, ids.completion.length, settings);
    if (!judgement) return { skipped: 'the verifier answered out of protocol' };
    if (!('local' in verifier)) {
      // A network node is paid its input price per evaluated token (never more than it was sent).
      const evaluated = checked.answer.response.usage.prompt_tokens;
      await payFromPlatform(store, {
        to: verifier.node.owner ?? verifier.node.nodeId,
        amountNano:
          (BigInt(Math.min(evaluated, ids.prompt.length + ids.completion.length)) * verifier.priceInNano) /
          1_000_000n,
        ref: `verify:${checked.jobId}`,
        now: clock.now(),
      });
    }
    return { verifier, judgement, jobId: checked.jobId };
  }

  /** Records a verification of `entry`'s node and acts on its standing (suspended: disconnected). */
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
  ): Promise<{ answer: Answer; jobId: string } | { skipped: string }> {
    const local = this.#local;
    if (!local) return { skipped: 'the coordinator verifier is not loaded' };
    try {
      const response = (await local.verify(model, request)) as Answer['response'];
      return { answer: { response, tokenIds: undefined }, jobId: `local-${randomUUID()}` };
    } catch (error) {
      return { skipped: `the coordinator verifier failed: ${(error as Error).message}` };
    }
  }

  /** Runs one job on `entry`'s node; an answer, or why not. */
  async #run(entry: Entry, spec: JobSpec): Promise<{ answer: Answer; jobId: string } | { skipped: string }> {
    const slot = await this.#claim(entry);
    if (!slot) return { skipped: `the node had no free slot for ${CLAIM_WAIT_MS / 1000} s` };
    return new Promise((resolve) => {
      const handle = this.#deps.router.dispatch(slot, spec, {
        onResult: (response, tokenIds) => resolve({ answer: { response, tokenIds }, jobId: handle.jobId }),
        onError: (error: JobError) => resolve({ skipped: `${error.code}: ${error.message}` }),
      });
    });
  }
}
