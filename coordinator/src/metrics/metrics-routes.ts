import type {} from '@fastify/rate-limit'; // types of `config.rateLimit`
import type {} from '@fastify/swagger'; // types of `schema.hide`
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { type Metrics, UNMATCHED_ROUTE } from './create-metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The coordinator's metrics registry and instruments (see create-metrics.ts). */
    metrics: Metrics;
  }
}

export type MetricsRoutesOptions = { readonly metrics: Metrics };

const NS_PER_S = 1e9;

/**
 * Decorates `app.metrics`, times every request (by route pattern, so the label set stays bounded)
 * and serves `GET /metrics` in the Prometheus text format.
 *
 * Requests are recorded when the response closes, so streamed and hijacked replies (SSE on /v1)
 * are counted with their full duration too.
 */
export const metricsRoutes = fp<MetricsRoutesOptions>(
  async (app: FastifyInstance, { metrics }) => {
    app.decorate('metrics', metrics);

    app.addHook('onRequest', async (request, reply) => {
      const startedAt = process.hrtime.bigint();
      const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
      reply.raw.once('close', () => {
        const labels = { method: request.method, route, status: String(reply.raw.statusCode) };
        metrics.httpRequests.inc(labels);
        metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - startedAt) / NS_PER_S);
      });
    });

    app.get('/metrics', { schema: { hide: true }, config: { rateLimit: false } }, async (_request, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    });

    app.addHook('onClose', async () => {
      metrics.registry.clear();
    });
  },
  { name: 'gpumesh-metrics', fastify: '5.x' },
);
