import Fastify from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { createMetrics } from './create-metrics.js';
import { metricsRoutes } from './metrics-routes.js';

async function build() {
  const app = Fastify();
  await app.register(metricsRoutes, { metrics: createMetrics({ processMetrics: false }) });
  app.get('/items/:id', async () => ({ ok: true }));
  app.get('/stream', (_request, reply) => {
    // A hijacked reply, as SSE relays are: Fastify's own hooks never see its end.
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
    reply.raw.write('data: 1\n\n');
    setTimeout(() => reply.raw.end('data: [DONE]\n\n'), 20);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

let app: Awaited<ReturnType<typeof build>> | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function url(path: string): string {
  const address = app!.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${address.port}${path}`;
}

describe('metricsRoutes', () => {
  test('default', async () => {
    app = await build();
    await fetch(url('/items/1'));
    await fetch(url('/items/2'));
    const response = await fetch(url('/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    // Labelled by route pattern, not by raw URL, so ids never explode the label set.
    expect(text).toContain('gpumesh_http_requests_total{method="GET",route="/items/:id",status="200"} 2');
    expect(text).toContain(
      'gpumesh_http_request_duration_seconds_count{method="GET",route="/items/:id",status="200"} 2',
    );
  });

  test('behavior: unmatched routes share one label', async () => {
    app = await build();
    await fetch(url('/nope/1'));
    await fetch(url('/nope/2'));
    const text = await (await fetch(url('/metrics'))).text();
    expect(text).toContain('gpumesh_http_requests_total{method="GET",route="unmatched",status="404"} 2');
  });

  test('behavior: a hijacked stream is counted when it ends', async () => {
    app = await build();
    const body = await (await fetch(url('/stream'))).text();
    expect(body).toContain('[DONE]');
    const text = await (await fetch(url('/metrics'))).text();
    expect(text).toContain('gpumesh_http_requests_total{method="GET",route="/stream",status="200"} 1');
  });

  test('behavior: app.metrics is the registry other modules record into', async () => {
    app = await build();
    app.metrics.tokens.inc({ model: 'tiny', kind: 'prompt' }, 7);
    app.metrics.creditsSpentNano.inc({ model: 'tiny' }, 1234);
    app.metrics.failovers.inc({ model: 'tiny' });
    const text = await (await fetch(url('/metrics'))).text();
    expect(text).toContain('gpumesh_tokens_total{model="tiny",kind="prompt"} 7');
    expect(text).toContain('gpumesh_credits_spent_nanousd_total{model="tiny"} 1234');
    expect(text).toContain('gpumesh_failovers_total{model="tiny"} 1');
  });
});
