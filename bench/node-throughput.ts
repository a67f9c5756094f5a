/**
 * Tokens per second served through the provider daemon vs node-llama-cpp called directly, on the
 * same generated models in the same run. The daemon is the real `gpumesh-node start` process; this
 * process plays the coordinator (job frames over a real WebSocket, every chunk frame streamed back
 * and validated). Greedy decoding makes both produce the same tokens. Each round runs one job each
 * way, in alternating order, so the machine's load (this 2-core machine drifts by ±10 % within a
 * minute) falls evenly on both. Two model sizes: the daemon's cost is per token, so it shows most
 * on the 2×64 test model (~0.3 ms a token) and fades on a larger one. Goal: ratio ≥ 0.95.
 *
 * Run: npm run -w bench node-throughput [-- --daemon-cpu-prof DIR]  (DIR gets the daemon's V8 CPU profile)
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type TinyModelOptions, writeTinyModel } from '@gpumesh/node';
import { CoordinatorPeer, spawnNodeDaemon } from '@gpumesh/node/testing';
import { createFrame, encodeFrame } from '@gpumesh/protocol';
import { getLlama, LlamaCompletion } from 'node-llama-cpp';

const MODELS: { id: string; shape: TinyModelOptions; rounds: number; maxTokens: number }[] = [
  { id: 'tiny', shape: { layers: 2, width: 64 }, rounds: 40, maxTokens: 256 },
  {
    id: 'medium',
    shape: { layers: 6, width: 384, heads: 6, feedForward: 1024 },
    rounds: 16,
    maxTokens: 128,
  },
];
const PROMPT = 'Once upon a time';

const { values: flags } = parseArgs({ options: { 'daemon-cpu-prof': { type: 'string' } } });
const profileDir = flags['daemon-cpu-prof'];
const dir = await mkdtemp(join(tmpdir(), 'gpumesh-bench-node-'));
for (const model of MODELS)
  await writeTinyModel({ path: join(dir, 'models', `${model.id}.gguf`), seed: 1, ...model.shape });
const llama = await getLlama({ gpu: false });

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

let jobCount = 0;
for (const spec of MODELS) {
  // Baseline: node-llama-cpp's own completion API, one sequence, one thread (as the daemon uses).
  const model = await llama.loadModel({ modelPath: join(dir, 'models', `${spec.id}.gguf`) });
  const context = await model.createContext({ sequences: 1, threads: 1, contextSize: 2048 });
  const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
  const direct = async (): Promise<number> => {
    let reported = 0;
    const { metadata } = await completion.generateCompletionWithMeta(model.tokenize(PROMPT), {
      maxTokens: spec.maxTokens,
      temperature: 0,
      repeatPenalty: false,
      onToken: (chunk) => {
        reported += chunk.length;
      },
    });
    // onToken leaves out tokens still held back (partial characters) when maxTokens stops it.
    return metadata.stopReason === 'maxTokens' ? spec.maxTokens : reported;
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
    session.frames.length = 0; // this job's chunks and presence: received and validated, not kept
    return response.usage.completion_tokens;
  };
  const measure = async (run: () => Promise<number>) => {
    const started = performance.now();
    const tokens = await run();
    return { tokens, ms: performance.now() - started };
  };

  await direct();
  await throughDaemon();
  const totals = { direct: { tokens: 0, ms: 0 }, daemon: { tokens: 0, ms: 0 } };
  const roundRatios: number[] = [];
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
  const rate = (t: { tokens: number; ms: number }) => (t.tokens / t.ms) * 1000;
  const { layers, width } = spec.shape;
  roundRatios.sort((a, b) => a - b);
  const median = roundRatios[Math.floor(roundRatios.length / 2)]!;
  console.log(
    `${spec.id} (${layers} layers × ${width} wide): ${spec.rounds} rounds × 1 job each way × ${spec.maxTokens} tokens`,
  );
  console.log(
    `  node-llama-cpp direct: ${rate(totals.direct).toFixed(0)} tokens/s (${totals.direct.tokens} tokens)`,
  );
  console.log(
    `  through the daemon:    ${rate(totals.daemon).toFixed(0)} tokens/s (${totals.daemon.tokens} tokens)`,
  );
  console.log(
    `  ratio daemon/direct:   ${(rate(totals.daemon) / rate(totals.direct)).toFixed(3)} (goal ≥ 0.95); per round: median ${median.toFixed(3)}, ${roundRatios[0]!.toFixed(3)}–${roundRatios.at(-1)!.toFixed(3)}`,
  );
  await context.dispose();
  await model.dispose();
}

await daemon.stop();
await peer.close();
await rm(dir, { recursive: true, force: true });
