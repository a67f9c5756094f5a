import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Latency buckets for HTTP requests, in seconds: API calls are milliseconds, chat streams minutes. */
export const HTTP_DURATION_BUCKETS_S = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
] as const;

/** The route label of a request no route matched (keeps the label set bounded). */
export const UNMATCHED_ROUTE = 'unmatched';

/** What a token count is: read from the prompt or generated. */
export const TOKEN_KINDS = ['prompt', 'completion'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** One node as the nodes gauge sees it; the hub lists its sessions in this shape. */
export type NodeCountView = { readonly state: string; readonly role: string; readonly tier: string };

/**
 * The coordinator's metrics: one prom-client registry per app, so several apps in one process
 * (tests) never share counters.
 *
 * Other modules record through the instruments, for example (LEDGER / ROUTER):
 * ```ts
 * app.metrics.tokens.inc({ model, kind: 'completion' }, usage.completion_tokens);
 * app.metrics.creditsSpentNano.inc({ model }, Number(chargedNano));
 * app.metrics.failovers.inc({ model });
 * app.metrics.trackNodes(() => hub.listNodes()); // once, when the hub starts
 * ```
 */
export type Metrics = {
  readonly registry: Registry;
  /** `gpumesh_http_requests_total{method,route,status}`: recorded by the metrics plugin. */
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  /** `gpumesh_http_request_duration_seconds{method,route,status}`: recorded by the metrics plugin. */
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** `gpumesh_tokens_total{model,kind}`: tokens served, kind is `prompt` or `completion`. */
  readonly tokens: Counter<'model' | 'kind'>;
  /** `gpumesh_credits_spent_nanousd_total{model}`: credits charged to users, in nanousd (1e-9 USD). */
  readonly creditsSpentNano: Counter<'model'>;
  /** `gpumesh_failovers_total{model}`: requests moved to the next node before their first token. */
  readonly failovers: Counter<'model'>;
  /** Node usage reports clamped to the coordinator's bound, by kind of count (node ids in the log). */
  readonly usageClamped: Counter<'kind'>;
  /** `gpumesh_nodes{state,role,tier}`: connected nodes, counted from {@link Metrics.trackNodes} at scrape time. */
  readonly nodes: Gauge<'state' | 'role' | 'tier'>;
  /** Names the function the nodes gauge counts at each scrape (the hub's live session list). */
  trackNodes(source: () => Iterable<NodeCountView>): void;
};

export type CreateMetricsOptions = {
  /** Also collect the process metrics (CPU, memory, event loop). Default true. */
  readonly processMetrics?: boolean;
};

/** Creates the registry and every instrument of the coordinator. No timers, no global state. */
export function createMetrics(options: CreateMetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });

  let nodeSource: () => Iterable<NodeCountView> = () => [];
  const nodes = new Gauge({
    name: 'gpumesh_nodes',
    help: 'Connected provider nodes by presence state, role and tier.',
    labelNames: ['state', 'role', 'tier'] as const,
    registers: [registry],
    collect() {
      // Counted at scrape time from the live list, so the gauge can never drift from the hub.
      this.reset();
      for (const node of nodeSource()) this.inc({ state: node.state, role: node.role, tier: node.tier });
    },
  });

  return {
    registry,
    httpRequests: new Counter({
      name: 'gpumesh_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'gpumesh_http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its response, by method, route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [...HTTP_DURATION_BUCKETS_S],
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'gpumesh_tokens_total',
      help: 'Tokens served by provider nodes, by model and kind (prompt or completion).',
      labelNames: ['model', 'kind'] as const,
      registers: [registry],
    }),
    creditsSpentNano: new Counter({
      name: 'gpumesh_credits_spent_nanousd_total',
      help: 'Credits charged to users for inference, in nanousd (1e-9 USD).',
      labelNames: ['model'] as const,
      registers: [registry],
    }),
    failovers: new Counter({
      name: 'gpumesh_failovers_total',
      help: 'Requests moved to the next-cheapest node after a failure before the first token.',
      labelNames: ['model'] as const,
      registers: [registry],
    }),
    usageClamped: new Counter({
      name: 'gpumesh_usage_clamped_total',
      help: 'Node usage reports over the bound the coordinator computed, clamped before billing, by kind (prompt or completion).',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    nodes,
    trackNodes(source) {
      nodeSource = source;
    },
  };
}
