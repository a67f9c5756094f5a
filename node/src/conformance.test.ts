import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatReport, NODE_SCENARIO_NAMES, runNodeConformance } from '@gpumesh/protocol/conformance';
import { getLlama } from 'node-llama-cpp';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from './config.js';
import { type Daemon, startDaemon } from './daemon.js';
import { writeTinyModel } from './models/write-tiny-model.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-node-conformance-'));
let daemon: Daemon | undefined;
afterAll(async () => {
  daemon?.hub.stop();
  await daemon?.shutdown();
  await rm(dir, { recursive: true, force: true });
});

describe('gpumesh-conformance node', () => {
  test('default: our node passes every scenario with the generated model', { timeout: 120_000 }, async () => {
    await writeTinyModel({ path: join(dir, 'models', 'tiny.gguf'), seed: 1 });
    const llama = await getLlama({ gpu: false });
    const report = await runNodeConformance({
      onListening: async (url) => {
        const config = loadConfig({
          env: {},
          flags: {
            coordinator: url,
            'state-dir': join(dir, 'state'),
            'models-dir': join(dir, 'models'),
            'offer-embeddings': true,
            'health-port': '0',
            gpu: 'cpu',
            'reconnect-min-ms': '20',
            'reconnect-max-ms': '200',
          },
        });
        daemon = await startDaemon(config, { llama });
      },
    });
    expect(report.results.map((r) => r.name)).toEqual(NODE_SCENARIO_NAMES);
    expect(
      report.results.filter((r) => r.status !== 'pass'),
      formatReport(report),
    ).toEqual([]);
    expect(report.ok).toBe(true);
  });
});
