import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildKitModel,
  formatReport,
  KIT_MODEL_FILE,
  NODE_SCENARIO_NAMES,
  runNodeConformance,
} from '@gpumesh/protocol/conformance';
import { getLlama } from 'node-llama-cpp';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from './config.js';
import { type Daemon, startDaemon } from './daemon.js';
import { writeTinyModel } from './models/write-tiny-model.js';
import { createFixedReplyRuntime } from './runtimes/fixed-reply-runtime.js';
import { startOpenAiCompatibleServer } from './testing/start-openai-compatible-server.js';

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
    // node-llama-cpp takes no image or audio: the vision and voice scenarios are run below, on the
    // voice runtime and on the relay; the verify scenarios on a network node holding the kit model.
    expect(
      report.results.filter(
        (r) => r.status !== 'pass' && !(r.status === 'skip' && [...MEDIA, ...VERIFY].includes(r.name)),
      ),
      formatReport(report),
    ).toEqual([]);
    expect(report.ok).toBe(true);
  });

  test('default: a network node serving the kit model passes the verify scenarios', {
    timeout: 60_000,
  }, async () => {
    await mkdir(join(dir, 'verifier', 'models'), { recursive: true });
    await writeFile(join(dir, 'verifier', 'models', KIT_MODEL_FILE), buildKitModel());
    let verifier: Daemon | undefined;
    try {
      const report = await runNodeConformance({
        scenarios: ['handshake', 'manifest', ...VERIFY],
        onListening: async (url) => {
          verifier = await startDaemon(daemonConfig(url, 'verifier', { role: 'network', gpu: 'cpu' }));
        },
      });
      expect(
        report.results.map((r) => [r.name, r.status]),
        formatReport(report),
      ).toEqual([['handshake', 'pass'], ['manifest', 'pass'], ...VERIFY.map((name) => [name, 'pass'])]);
    } finally {
      verifier?.hub.stop();
      await verifier?.shutdown();
    }
  });

  test('default: the voice runtime (espeak-ng, pocketsphinx) passes speech and transcription', {
    timeout: 60_000,
  }, async () => {
    let voice: Daemon | undefined;
    try {
      const report = await runNodeConformance({
        scenarios: ['handshake', 'manifest', 'speech', 'transcription'],
        onListening: async (url) => {
          voice = await startDaemon(daemonConfig(url, 'voice', { runtime: 'voice' }));
        },
      });
      expect(
        report.results.map((r) => [r.name, r.status]),
        formatReport(report),
      ).toEqual([
        ['handshake', 'pass'],
        ['manifest', 'pass'],
        ['speech', 'pass'],
        ['transcription', 'pass'],
      ]);
    } finally {
      voice?.hub.stop();
      await voice?.shutdown();
    }
  });

  test('default: the relay passes vision, in front of a local OpenAI-compatible stand-in for vLLM/Ollama', {
    timeout: 60_000,
  }, async () => {
    // The stand-in (vLLM and Ollama can't run here) answers any chat, images included.
    const server = await startOpenAiCompatibleServer(
      createFixedReplyRuntime({
        models: [{ id: 'vision-standin', family: 'chat', contextLength: 4096, maxConcurrency: 2 }],
        reply: 'a single pixel',
        promptTokens: 90,
      }),
    );
    const configFile = join(dir, 'relay.json');
    await writeFile(configFile, JSON.stringify({ models: [{ id: 'vision-standin', family: 'vision' }] }));
    let relay: Daemon | undefined;
    try {
      const report = await runNodeConformance({
        scenarios: ['handshake', 'manifest', 'vision'],
        onListening: async (url) => {
          relay = await startDaemon(
            daemonConfig(url, 'relay', {
              runtime: 'openai',
              'openai-url': server.baseUrl,
              config: configFile,
            }),
          );
        },
      });
      expect(
        report.results.map((r) => [r.name, r.status]),
        formatReport(report),
      ).toEqual([
        ['handshake', 'pass'],
        ['manifest', 'pass'],
        ['vision', 'pass'],
      ]);
    } finally {
      relay?.hub.stop();
      await relay?.shutdown();
      await server.close();
    }
  });
});

const MEDIA = ['vision', 'speech', 'transcription'];
const VERIFY = ['verify', 'verify_unknown_model', 'verify_bad_tokens'];

/** A daemon config for the kit at `url`, its state under `dir/<name>`. */
function daemonConfig(url: string, name: string, flags: Record<string, string>) {
  return loadConfig({
    env: {},
    ...(flags.config ? { configFile: flags.config } : {}),
    flags: {
      coordinator: url,
      'state-dir': join(dir, name, 'state'),
      'models-dir': join(dir, name, 'models'),
      'health-port': '0',
      'reconnect-min-ms': '20',
      'reconnect-max-ms': '200',
      ...flags,
    },
  });
}
