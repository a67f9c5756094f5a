/**
 * Every `trust.reputationIntervalMs`, scores the nodes connected to this replica (reputation.ts)
 * and suspends those below `trust.minReputation` (suspensions.ts): recorded with the figures as the
 * reason, told why in an `error` frame and disconnected (4012), refused when they come back.
 */
import type { Store } from '../../db/store.js';
import { TRUST_STATUS } from '../../db/tables/trust.js';
import type { Hub } from '../../hub/hub.js';
import { reputationsOf } from './reputation.js';
import type { Suspensions } from './suspensions.js';

export type ReputationGuardDeps = {
  hub: Hub;
  store: Store;
  settings: { minReputation: number; reputationIntervalMs: number };
  clock: { now(): number };
  /** Writes the suspension and acts on it (suspensions.ts). */
  suspensions: Suspensions;
  log: { warn(obj: object, msg: string): void };
};

export class ReputationGuard {
  readonly #deps: ReputationGuardDeps;
  #timer: NodeJS.Timeout | undefined;
  #running = false;

  constructor(deps: ReputationGuardDeps) {
    this.#deps = deps;
  }

  start(): void {
    const every = this.#deps.settings.reputationIntervalMs;
    if (every <= 0 || this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = true;
      this.sweep()
        .catch((err: unknown) => this.#deps.log.warn({ err }, 'reputation sweep failed'))
        .finally(() => {
          this.#running = false;
        });
    }, every).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One pass; returns the ids it suspended. */
  async sweep(): Promise<string[]> {
    const { hub, store, settings, clock } = this.#deps;
    const local = [...hub.index.nodes()].filter((n) => !n.via && n.state !== 'suspended');
    const live = new Set(local.map((n) => n.nodeId.toLowerCase()));
    const now = clock.now();
    const scores = await reputationsOf(
      store.db,
      local.map((n) => n.nodeId),
      now,
      (id) => live.has(id),
    );
    const suspended: string[] = [];
    for (const node of local) {
      const r = scores.get(node.nodeId.toLowerCase());
      if (!r || r.score >= settings.minReputation || r.status === TRUST_STATUS.suspended) continue;
      const reason =
        `reputation ${r.score} is below ${settings.minReputation}: verifications ${r.verifications.passed} passed / ` +
        `${r.verifications.failed} failed, ${r.violations} usage reports over the bound, jobs ` +
        `${r.jobs.completed} completed / ${r.jobs.failed} failed / ${r.jobs.missed} missed in 7 days, uptime ${(r.uptime7d * 100).toFixed(1)}%`;
      await this.#deps.suspensions.suspendForReputation(node.nodeId, reason, now);
      suspended.push(node.nodeId);
    }
    return suspended;
  }
}
