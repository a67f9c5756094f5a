/**
 * Tokens per second served through the provider daemon vs node-llama-cpp called directly, on the
 * same generated model in the same run. The daemon is the real `gpumesh-node start` process; this
 * process plays the coordinator (job frames over a real WebSocket, every chunk frame streamed back
 * and validated). Greedy decoding makes both produce the same tokens; rounds alternate so the
 * machine's load drifts evenly over both. Goal: ratio ≥ 0.95.
 *
 * Run: npm run -w bench node-throughput
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { CoordinatorPeer } from '@gpumesh/node/testing';
import { createFrame, encodeFrame } from '@gpumesh/protocol';
import { getLlama, LlamaCompletion } from 'node-llama-cpp';

const ROUNDS = 5;
const JOBS_PER_ROUND = 6;
const MAX_TOKENS = 256;
const PROMPT = 'Once upon a time';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-bench-node-'));
await writeTinyModel({ path: join(dir, 'models', 'tiny.gguf'), seed: 1 });
const llama = await getLlama({ gpu: false });

// Baseline: node-llama-cpp's own completion API, one sequence, one thread (as the daemon uses).
const model = await llama.loadModel({ modelPath: join(dir, 'models', 'tiny.gguf') });
const context = await model.createContext({ sequences: 1, threads: 1, contextSize: 2048 });
const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
async function direct(): Promise<number> {
  let reported = 0;
  const { metadata } = await completion.generateCompletionWithMeta(model.tokenize(PROMPT), {
    maxTokens: MAX_TOKENS,
    temperature: 0,
    repeatPenalty: false,
    onToken: (chunk) => {
      reported += chunk.length;
    },
  });
  // onToken leaves out tokens still held back (partial characters) when maxTokens stops it.
  return metadata.stopReason === 'maxTokens' ? MAX_TOKENS : reported;
}

// The daemon, connected to a coordinator peer in this process (a production-like 10 s heartbeat:
// the baseline's generation shares this event loop).
const peer = new CoordinatorPeer({ heartbeatIntervalMs: 10_000 });
await once(peer.wss, 'listening');
const bin = join(import.meta.dirname, '..', 'node', 'bin', 'gpumesh-node.js');
const daemon = spawn(
  process.execPath,
  [
    bin,
    'start',
    '--coordinator',
    peer.url,
    '--state-dir',
    join(dir, 'state'),
    '--models-dir',
    join(dir, 'models'),
    '--health-port',
    '0',
    '--gpu',
    'cpu',
    '--max-concurrency',
    '1',
  ],
  { stdio: 'ignore' },
);
const session = await peer.nextSession(0);
await session.next('presence');
let jobCount = 0;
async function throughDaemon(): Promise<number> {
  const job = createFrame('job', {
    jobId: `bench-${jobCount++}`,
    kind: 'completion',
    model: 'tiny',
    request: { model: 'tiny', prompt: PROMPT, max_tokens: MAX_TOKENS, temperature: 0 },
    stream: true,
    timeoutMs: 120_000,
  });
  session.ws.send(encodeFrame(job));
  const { response } = await session.next('result', (r) => r.jobId === job.jobId, 120_000);
  session.frames.length = 0; // chunks and presence of this job: received, not kept
  return response.usage.completion_tokens;
}

async function measure(run: () => Promise<number>) {
  const started = performance.now();
  let tokens = 0;
  for (let i = 0; i < JOBS_PER_ROUND; i++) tokens += await run();
  return { tokens, ms: performance.now() - started };
}

await measure(direct);
await measure(throughDaemon);
const totals = { direct: { tokens: 0, ms: 0 }, daemon: { tokens: 0, ms: 0 } };
for (let round = 0; round < ROUNDS; round++) {
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
console.log(`node throughput: ${ROUNDS} rounds × ${JOBS_PER_ROUND} jobs, up to ${MAX_TOKENS} tokens each`);
console.log(
  `  node-llama-cpp direct: ${rate(totals.direct).toFixed(0)} tokens/s (${totals.direct.tokens} tokens)`,
);
console.log(
  `  through the daemon:    ${rate(totals.daemon).toFixed(0)} tokens/s (${totals.daemon.tokens} tokens)`,
);
console.log(
  `  ratio daemon/direct:   ${(rate(totals.daemon) / rate(totals.direct)).toFixed(3)} (goal ≥ 0.95)`,
);

daemon.kill('SIGTERM');
await once(daemon, 'exit');
await peer.close();
await context.dispose();
await model.dispose();
await rm(dir, { recursive: true, force: true });
