import { describe, expect, test } from 'vitest';
import { createMetrics } from './create-metrics.js';

describe('createMetrics', () => {
  test('default', async () => {
    const metrics = createMetrics();
    const text = await metrics.registry.metrics();
    for (const name of [
      'gpumesh_http_requests_total',
      'gpumesh_http_request_duration_seconds',
      'gpumesh_tokens_total',
      'gpumesh_credits_spent_nanousd_total',
      'gpumesh_failovers_total',
      'gpumesh_nodes',
      'process_cpu_user_seconds_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  test('behavior: two registries never share counts', async () => {
    const a = createMetrics({ processMetrics: false });
    const b = createMetrics({ processMetrics: false });
    a.tokens.inc({ model: 'm', kind: 'completion' }, 5);
    expect((await a.tokens.get()).values[0]?.value).toBe(5);
    expect((await b.tokens.get()).values).toEqual([]);
  });

  test('behavior: nodes gauge counts the tracked list at each scrape', async () => {
    const metrics = createMetrics({ processMetrics: false });
    const nodes = [
      { state: 'online', role: 'gpu', tier: 'gold' },
      { state: 'online', role: 'gpu', tier: 'gold' },
      { state: 'busy', role: 'cpu', tier: 'none' },
    ];
    metrics.trackNodes(() => nodes);
    let text = await metrics.registry.metrics();
    expect(text).toContain('gpumesh_nodes{state="online",role="gpu",tier="gold"} 2');
    expect(text).toContain('gpumesh_nodes{state="busy",role="cpu",tier="none"} 1');

    nodes.splice(0, 2);
    text = await metrics.registry.metrics();
    expect(text).not.toContain('state="online"');
    expect(text).toContain('gpumesh_nodes{state="busy",role="cpu",tier="none"} 1');
  });
});
