/**
 * Tokens per second served through the provider daemon vs node-llama-cpp called directly, on the
 * same generated models in the same run. The daemon is the real `gpumesh-node start` process; this
 * process plays the coordinator (job frames over a real WebSocket, every chunk frame streamed back
 * and validated). Greedy decoding makes both produce the same tokens; rounds alternate so the
 * machine's load drifts evenly over both. Two model sizes: the daemon's cost is per token, so it
 * shows most on the 2×64 test model (~1 ms a token) and fades on a larger one. Goal: ratio ≥ 0.95.
 *
 * Run: npm run -w bench node-throughput
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TinyModelOptions, writeTinyModel } from '@gpumesh/node';
import { CoordinatorPeer, spawnNodeDaemon } from '@gpumesh/node/testing';
import { createFrame, encodeFrame } from '@gpumesh/protocol';
import { getLlama, LlamaCompletion } from 'node-llama-cpp';

const MODELS: { id: string; shape: TinyModelOptions; rounds: number; jobs: number; maxTokens: number }[] = [
  { id: 'tiny', shape: { layers: 2, width: 64 }, rounds: 5, jobs: 6, maxTokens: 256 },
  {
    id: 'medium',
    shape: { layers: 6, width: 384, heads: 6, feedForward: 1024 },
    rounds: 3,
    jobs: 3,
    maxTokens: 128,
  },
];
const PROMPT = 'Once upon a time';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-bench-node-'));
for (const model of MODELS)
  await writeTinyModel({ path: join(dir, 'models', `${model.id}.gguf`), seed: 1, ...model.shape });
const llama = await getLlama({ gpu: false });

// The daemon, connected to a coordinator peer in this process (a production-like 10 s heartbeat).
const peer = new CoordinatorPeer({ heartbeatIntervalMs: 10_000 });
await once(peer.wss, 'listening');
const daemon = spawnNodeDaemon({ coordinator: peer.url, dir });
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
    let tokens = 0;
    for (let i = 0; i < spec.jobs; i++) tokens += await run();
    return { tokens, ms: performance.now() - started };
  };

  await direct();
  await throughDaemon();
  const totals = { direct: { tokens: 0, ms: 0 }, daemon: { tokens: 0, ms: 0 } };
  for (let round = 0; round < spec.rounds; round++) {
    for (const [name, run] of [
      ['direct', direct],
      ['daemon', throughDaemon],
    ] as const) {
      const { tokens, ms } = await measure(run);
      totals[name].tokens += tokens;
      totals[name].ms += ms;
    }
  }
  const rate = (t: { tokens: number; ms: number }) => (t.tokens / t.ms) * 1000;
  const { layers, width } = spec.shape;
  console.log(
    `${spec.id} (${layers} layers × ${width} wide): ${spec.rounds} rounds × ${spec.jobs} jobs × ${spec.maxTokens} tokens`,
  );
  console.log(
    `  node-llama-cpp direct: ${rate(totals.direct).toFixed(0)} tokens/s (${totals.direct.tokens} tokens)`,
  );
  console.log(
    `  through the daemon:    ${rate(totals.daemon).toFixed(0)} tokens/s (${totals.daemon.tokens} tokens)`,
  );
  console.log(
    `  ratio daemon/direct:   ${(rate(totals.daemon) / rate(totals.direct)).toFixed(3)} (goal ≥ 0.95)`,
  );
  await context.dispose();
  await model.dispose();
}

await daemon.stop();
await peer.close();
await rm(dir, { recursive: true, force: true });
