import { describe, expect, test, vi } from 'vitest';
import { startReferenceCoordinator } from '../reference/reference-coordinator.js';
import type { ConformanceReport } from '../report.js';
import { COORDINATOR_SCENARIO_NAMES } from './coordinator-scenarios.js';
import { runCoordinatorConformance } from './run-coordinator-conformance.js';

// The broken-rule runs below each wait out one step deadline (10 s, a safety net for a loaded
// machine) and otherwise mostly wait on timers: all of them at once, not vitest's default 5.
vi.setConfig({ maxConcurrency: 64 });

/** Runs the whole kit against the reference coordinator, optionally broken on one scenario's rule. */
async function runAgainstReferenceCoordinator(
  breaks?: string,
  withTrigger = true,
): Promise<ConformanceReport> {
  const coordinator = await startReferenceCoordinator({
    heartbeatIntervalMs: 500,
    maxFrameBytes: 256 * 1024,
    breaks,
  });
  try {
    return await runCoordinatorConformance({
      url: coordinator.url,
      // Deadlines are safety nets, generous for a loaded machine: a passing step ends on its frame.
      stepTimeoutMs: 10_000,
      jobTimeoutMs: 10_000,
      ...(withTrigger
        ? {
            trigger: async ({ kind, model, body }) =>
              JSON.stringify(
                await coordinator.runJob({
                  kind,
                  model,
                  request: body,
                  stream: Boolean(body.stream),
                  timeoutMs: 10_000,
                }),
              ),
          }
        : {}),
    });
  } finally {
    await coordinator.close();
  }
}

describe('runCoordinatorConformance', () => {
  test('default: the reference coordinator passes every scenario', async () => {
    const report = await runAgainstReferenceCoordinator();
    expect(report.results.map((r) => [r.name, r.status, r.detail])).toEqual(
      COORDINATOR_SCENARIO_NAMES.map((name) => [name, 'pass', undefined]),
    );
    expect(report.ok).toBe(true);
  });

  test('behavior: without a trigger the jobs scenario is skipped, not failed', async () => {
    const report = await runAgainstReferenceCoordinator(undefined, false);
    expect(report.results.find((r) => r.name === 'jobs')?.status).toBe('skip');
    expect(report.ok).toBe(true);
  });

  // Concurrent: each run has its own coordinator on its own port, and mostly waits on timers.
  describe.concurrent('error: a coordinator that breaks one rule fails exactly that scenario', () => {
    for (const scenario of COORDINATOR_SCENARIO_NAMES) {
      test(scenario, { timeout: 120_000 }, async () => {
        const report = await runAgainstReferenceCoordinator(scenario);
        const failed = report.results.filter((r) => r.status === 'fail').map((r) => `${r.name}: ${r.detail}`);
        expect(failed).toHaveLength(1);
        expect(failed[0]).toMatch(new RegExp(`^${scenario}: `));
        for (const r of report.results.filter((r) => r.status === 'skip'))
          expect(r.detail).toMatch(/^needs /);
        expect(report.ok).toBe(false);
      });
    }
  });

  test('error: nothing listens at the url', async () => {
    const report = await runCoordinatorConformance({ url: 'ws://127.0.0.1:1', scenarios: ['handshake'] });
    expect(report.ok).toBe(false);
    expect(report.results[0]?.detail).toMatch(/could not connect/);
  });
});
