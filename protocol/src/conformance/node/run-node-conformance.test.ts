import { describe, expect, test, vi } from 'vitest';
import { type ReferenceNode, startReferenceNode } from '../reference/reference-node.js';
import type { ConformanceReport } from '../report.js';
import { NODE_SCENARIO_NAMES } from './node-scenarios.js';
import { runNodeConformance } from './run-node-conformance.js';

// The broken-rule runs below each wait out one step deadline (10 s, a safety net for a loaded
// machine) and otherwise mostly wait on timers: all of them at once, not vitest's default 5.
vi.setConfig({ maxConcurrency: 64 });

/** Runs the whole kit against the reference node, optionally broken on one scenario's rule. */
async function runAgainstReferenceNode(breaks?: string, prefixCache = true): Promise<ConformanceReport> {
  let node: ReferenceNode | undefined;
  try {
    return await runNodeConformance({
      port: 0,
      heartbeatIntervalMs: 300,
      // Deadlines are safety nets, generous for a loaded machine (1.5 s failed a step under two CPU
      // burners): a passing step ends on its frame, and only a broken rule waits one out.
      stepTimeoutMs: 10_000,
      connectTimeoutMs: 20_000,
      onListening: (url) => {
        node = startReferenceNode({ url, reconnectDelayMs: 10, breaks, prefixCache });
      },
    });
  } finally {
    await node?.stop();
  }
}

describe('runNodeConformance', () => {
  test('default: the reference node passes every scenario', async () => {
    const report = await runAgainstReferenceNode();
    expect(report.results.map((r) => [r.name, r.status, r.detail])).toEqual(
      NODE_SCENARIO_NAMES.map((name) => [name, 'pass', undefined]),
    );
    expect(report.ok).toBe(true);
  });

  test('behavior: a node that claims no prefix cache (as every node before v0.5) passes every scenario', async () => {
    const report = await runAgainstReferenceNode(undefined, false);
    expect(report.results.map((r) => [r.name, r.status, r.detail])).toEqual(
      NODE_SCENARIO_NAMES.map((name) => [name, 'pass', undefined]),
    );
  });

  test('error: a node that advertises its cache but not the conversation it just served fails prefix_cache', async () => {
    const report = await runAgainstReferenceNode('prefix_cache');
    const failed = report.results.filter((r) => r.status === 'fail').map((r) => `${r.name}: ${r.detail}`);
    expect(failed).toEqual([
      expect.stringMatching(
        /^prefix_cache: no ping or presence after the second turn advertised its key [0-9a-f]{16} /,
      ),
    ]);
  });

  // Concurrent: each run listens on its own port, and a run mostly waits on timers (heartbeats, timeouts).
  describe.concurrent('error: a node that breaks one rule fails exactly that scenario', () => {
    for (const scenario of NODE_SCENARIO_NAMES) {
      test(scenario, { timeout: 120_000 }, async () => {
        const report = await runAgainstReferenceNode(scenario);
        const failed = report.results.filter((r) => r.status === 'fail').map((r) => `${r.name}: ${r.detail}`);
        // The whole list in the message: a second failure names its scenario and why.
        expect(failed).toEqual([expect.stringMatching(new RegExp(`^${scenario}: `))]);
        const skipped = report.results.filter((r) => r.status === 'skip');
        for (const r of skipped) expect(r.detail).toMatch(/^needs /);
        expect(report.ok).toBe(false);
      });
    }
  });

  test('error: chunks whose tokens do not add up to completion_tokens fail chat_stream', async () => {
    const report = await runAgainstReferenceNode('chat_stream_tokens');
    const failed = report.results.filter((r) => r.status === 'fail').map((r) => `${r.name}: ${r.detail}`);
    expect(failed).toEqual([expect.stringMatching(/^chat_stream: the chunks' tokens add up to 16,/)]);
  });

  test('error: a verifier that ignores the job’s sampling settings (raw log-probabilities for sampled ones) fails verify', async () => {
    const report = await runAgainstReferenceNode('verify_sampling');
    const failed = report.results.filter((r) => r.status === 'fail').map((r) => `${r.name}: ${r.detail}`);
    expect(failed).toEqual([
      expect.stringMatching(
        /^verify: kit_sampled: sampled_logprobs\[0\] is -1\.\d+, the kit model gives -1\.1631 /,
      ),
    ]);
  });

  test('error: no node connects', async () => {
    const report = await runNodeConformance({ port: 0, connectTimeoutMs: 200, scenarios: ['handshake'] });
    expect(report.ok).toBe(false);
    expect(report.results[0]?.detail).toMatch(/did not connect/);
  });
});
