/**
 * Tokens per second served through the provider daemon vs node-llama-cpp called directly, on the
 * same generated models in the same run. The daemon is the real `gpumesh-node start` process; this
 * process plays the coordinator (job frames over a real WebSocket, every chunk frame streamed back
 * and validated). The baseline is node-llama-cpp's LlamaCompletion in a process of its own too
 * (llama-direct-process.ts, spawned like the daemon, loading the same models with the daemon
 * runtime's settings, asked over IPC), so neither side gets the bench process's memory or
 * scheduling; both processes live through the whole run, each idle while the other works. The
 * baseline takes the text as it streams (onTextChunk), since serving means producing streamed text,
 * which the daemon must do (node-llama-cpp detokenizes for its result either way). Greedy
 * decoding makes both produce the same tokens. Each round runs one job each way, in alternating
 * order, so the machine's load (this 2-core machine drifts by ±10 % within a minute) falls evenly
 * on both. Two model sizes: the daemon's cost is per token, so it shows most on the 2×64 test model
 * (~0.3 ms a token) and fades on a larger one. Goal: ratio ≥ 0.95. On Linux it also prints each
 * process's CPU time per token (main thread; other threads, llama.cpp's among them) and run-queue
 * wait, from /proc/…/schedstat.
 *
 * Single rounds swing from 0.3 to 3.9 on this shared 2-core machine, and the totals ratio weighs
 * the rounds that happened to run slowly most, so the run prints both: the ratio of the totals and
 * the median of the per-round ratios, with its 95 % bootstrap interval, the middle half of the
 * rounds (IQR) and the range, plus the load average around each model's rounds.
 *
 * Run: npm run -w bench node-throughput [-- --daemon-cpu-prof DIR] [-- --model tiny|medium]
 * (DIR gets V8 CPU profiles of the daemon and, for symmetry, of the baseline process; --model runs
 * only that model)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type TinyModelOptions, writeTinyModel } from '@gpumesh/node';
import { CoordinatorPeer, spawnNodeDaemon } from '@gpumesh/node/testing';
import { createFrame, encodeFrame } from '@gpumesh/protocol';
import type { DirectReply, DirectRequest } from './llama-direct-process.js';
import { summarizeRatios } from './ratio-summary.js';
import { readThreads, type ThreadReading, usedBetween } from './thread-times.js';

const MODELS: { id: string; shape: TinyModelOptions; rounds: number; maxTokens: number }[] = [
  // ~20 s each at this machine's usual speed (tiny ~2,500 tokens/s, medium ~350), ~1 min when it
  // is loaded. More rounds narrow the per-round median's interval (it shrinks as 1/√rounds).
  { id: 'tiny', shape: { layers: 2, width: 64 }, rounds: 100, maxTokens: 256 },
  {
    id: 'medium',
    shape: { layers: 6, width: 384, heads: 6, feedForward: 1024 },
    rounds: 32,
    maxTokens: 128,
  },
];
const PROMPT = 'Once upon a time';
/** Jobs each way before the measured rounds (JIT, caches, the context's prompt prefix). */
const WARMUP_JOBS = 3;

const { values: flags } = parseArgs({
  options: { 'daemon-cpu-prof': { type: 'string' }, model: { type: 'string' } },
});
const profileDir = flags['daemon-cpu-prof'];
const models = MODELS.filter((model) => !flags.model || model.id === flags.model);
if (models.length === 0) throw new Error(`--model: one of ${MODELS.map((model) => model.id).join(', ')}`);
const dir = await mkdtemp(join(tmpdir(), 'gpumesh-bench-node-'));
for (const model of models)
  await writeTinyModel({ path: join(dir, 'models', `${model.id}.gguf`), seed: 1, ...model.shape });

// The daemon, connected to a coordinator peer in this process (a production-like 10 s heartbeat).
const peer = new CoordinatorPeer({ heartbeatIntervalMs: 10_000 });
await once(peer.wss, 'listening');
const daemon = spawnNodeDaemon({
  coordinator: peer.url,
  dir,
  ...(profileDir ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', resolve(profileDir)] } : {}),
});
const session = await peer.nextSession(0);
await session.next('presence');

// The baseline: node-llama-cpp called directly, in a process of its own spawned as the daemon is
// (same Node.js, environment and flags), holding the same models with the same settings. Both
// processes live through the whole run, each idle while the other works.
const directProcess = spawn(
  process.execPath,
  [
    ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', resolve(profileDir)] : []),
    '--conditions=gpumesh-source',
    '--import',
    'tsx',
    join(import.meta.dirname, 'llama-direct-process.ts'),
    join(dir, 'models'),
  ],
  { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: { ...process.env, GPUMESH_COORDINATOR: '' } },
);
let directStderr = '';
directProcess.stderr?.on('data', (chunk: Buffer) => {
  directStderr = (directStderr + chunk.toString()).slice(-4_000);
});
const directExited = new Promise<never>((_, reject) =>
  directProcess.once('exit', (code, signal) =>
    reject(new Error(`llama-direct-process exited (${signal ?? code}): ${directStderr}`)),
  ),
);
directExited.catch(() => {}); // awaited by every request below
const directReply = (match: (reply: DirectReply) => boolean) =>
  Promise.race([
    new Promise<DirectReply>((resolve) => {
      const onMessage = (reply: DirectReply) => {
        if (!match(reply)) return;
        directProcess.off('message', onMessage);
        resolve(reply);
      };
      directProcess.on('message', onMessage);
    }),
    directExited,
  ]);
await directReply((reply) => 'ready' in reply);

const cpuPerToken = (pid: number, before: ThreadReading | null, tokens: number) => {
  const after = readThreads(pid);
  if (!before || !after) return '';
  const used = usedBetween(pid, before, after);
  const µs = (key: keyof typeof used) => (used[key] / tokens / 1000).toFixed(1);
  return `; CPU per token: main thread ${µs('main')} µs, other threads ${µs('others')} µs, run-queue wait ${µs('waited')} µs`;
};

const loadAverage = () => loadavg()[0]!.toFixed(2);

let jobCount = 0;
for (const spec of models) {
  let directOwnMs = 0; // the child's own timing of its generations, without the IPC round trip
  let chunkFrames = 0; // streamed back by the daemon during the measured rounds
  const direct = async (): Promise<number> => {
    const request: DirectRequest = {
      id: jobCount++,
      model: spec.id,
      prompt: PROMPT,
      maxTokens: spec.maxTokens,
    };
    directProcess.send(request);
    const reply = await directReply((r) => 'id' in r && r.id === request.id);
    if ('error' in reply) throw new Error(`llama-direct-process: ${reply.error}`);
    const { tokens, ms } = reply as { tokens: number; ms: number };
    directOwnMs += ms;
    return tokens;
  };
  const throughDaemon = async (): Promise<number> => {
    const job = createFrame('job', {
      jobId: `bench-${jobCount++}`,
      kind: 'completion',
      model: spec.id,
      request: { model: spec.id, prompt: PROMPT, max_tokens: spec.maxTokens, temperature: 0 },
      stream: true,
      timeoutMs: 300_000,
    });
    session.ws.send(encodeFrame(job));
    const { response } = await session.next('result', (r) => r.jobId === job.jobId, 300_000);
    chunkFrames += session.frames.filter((frame) => frame.type === 'chunk').length;
    session.frames.length = 0; // this job's chunks and presence: received and validated, not kept
    return response.usage.completion_tokens;
  };
  const measure = async (run: () => Promise<number>) => {
    const started = performance.now();
    const tokens = await run();
    return { tokens, ms: performance.now() - started };
  };

  for (let i = 0; i < WARMUP_JOBS; i++) {
    await direct();
    await throughDaemon();
  }
  directOwnMs = 0;
  chunkFrames = 0;
  const directBefore = readThreads(directProcess.pid!);
  const daemonBefore = readThreads(daemon.process.pid!);
  const totals = { direct: { tokens: 0, ms: 0 }, daemon: { tokens: 0, ms: 0 } };
  const roundRatios: number[] = [];
  const loadBefore = loadAverage();
  for (let round = 0; round < spec.rounds; round++) {
    const order = [
      ['direct', direct],
      ['daemon', throughDaemon],
    ] as const;
    const rates: Record<string, number> = {};
    for (const [name, run] of round % 2 === 0 ? order : [...order].reverse()) {
      const { tokens, ms } = await measure(run);
      totals[name].tokens += tokens;
      totals[name].ms += ms;
      rates[name] = tokens / ms;
    }
    roundRatios.push(rates.daemon! / rates.direct!);
  }
  const loadAfter = loadAverage();
  const rate = (t: { tokens: number; ms: number }) => (t.tokens / t.ms) * 1000;
  const { layers, width } = spec.shape;
  const rounds = summarizeRatios(roundRatios);
  const f = (ratio: number) => ratio.toFixed(3);
  console.log(
    `${spec.id} (${layers} layers × ${width} wide): ${spec.rounds} rounds × 1 job each way × ${spec.maxTokens} tokens; load average ${loadBefore} → ${loadAfter}`,
  );
  console.log(
    `  node-llama-cpp direct: ${rate(totals.direct).toFixed(0)} tokens/s (${totals.direct.tokens} tokens; ${rate({ tokens: totals.direct.tokens, ms: directOwnMs }).toFixed(0)} by its own clock, without IPC)${cpuPerToken(directProcess.pid!, directBefore, totals.direct.tokens)}`,
  );
  console.log(
    `  through the daemon:    ${rate(totals.daemon).toFixed(0)} tokens/s (${totals.daemon.tokens} tokens, ${(totals.daemon.tokens / chunkFrames).toFixed(1)} per chunk frame)${cpuPerToken(daemon.process.pid!, daemonBefore, totals.daemon.tokens)}`,
  );
  console.log(
    `  ratio daemon/direct:   per-round median ${f(rounds.median)} (95 % interval ${f(rounds.medianLow)}–${f(rounds.medianHigh)}; IQR ${f(rounds.q1)}–${f(rounds.q3)}; range ${f(rounds.min)}–${f(rounds.max)}); totals ${f(rate(totals.daemon) / rate(totals.direct))} (goal ≥ 0.95)`,
  );
}

directProcess.disconnect();
await directExited.catch(() => {});
await daemon.stop();
await peer.close();
await rm(dir, { recursive: true, force: true });
