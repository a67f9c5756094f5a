/**
 * The baseline of node-throughput.ts in a process of its own, as the daemon is: node-llama-cpp's
 * LlamaCompletion called directly. It loads what the daemon's llama runtime loads, with the same
 * settings: the CPU build, every `.gguf` in the folder (by name), each with one context of one
 * sequence, `min(4096, trained)` tokens and `defaultThreads()` threads, batch size and the rest
 * left to node-llama-cpp's defaults as the runtime leaves them. The thread count matters most: left
 * to node-llama-cpp (4 threads on the CPU build), a 128-token job took 13–33 s on this 2-core
 * machine instead of ~0.1–0.3 s, which looks like a hang.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/llama-direct-process.ts <models-dir>  (with an IPC channel)
 * Sends {ready: true} once loaded; answers {id, model, prompt, maxTokens} with {id, tokens, ms}
 * (or {id, error}). Exits when the channel closes.
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { defaultThreads } from '@gpumesh/node';
import { getLlama, LlamaCompletion, type LlamaModel } from 'node-llama-cpp';

/** As the runtime's DEFAULT_CONTEXT_TOKENS. */
const CONTEXT_TOKENS = 4096;

export type DirectRequest = { id: number; model: string; prompt: string; maxTokens: number };
export type DirectReply =
  | { ready: true }
  | { id: number; tokens: number; ms: number }
  | { id: number; error: string };

const [modelsDir] = process.argv.slice(2);
if (!modelsDir || !process.send) {
  console.error('usage (with an IPC channel): llama-direct-process.ts <models-dir>');
  process.exit(2);
}
const send = (reply: DirectReply) => process.send!(reply);

const llama = await getLlama({ gpu: false });
const threads = defaultThreads();
const completions = new Map<string, { model: LlamaModel; completion: LlamaCompletion }>();
for (const file of (await readdir(modelsDir)).filter((f) => f.endsWith('.gguf')).sort()) {
  const model = await llama.loadModel({ modelPath: join(modelsDir, file) });
  const context = await model.createContext({
    sequences: 1,
    contextSize: Math.min(CONTEXT_TOKENS, model.trainContextSize),
    threads,
  });
  const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
  completions.set(basename(file, '.gguf'), { model, completion });
}

async function generate({ model: id, prompt, maxTokens }: DirectRequest): Promise<number> {
  const { model, completion } = completions.get(id) ?? {};
  if (!model || !completion) throw new Error(`no model ${id}`);
  let reported = 0;
  let _text = ''; // kept, as the daemon keeps the whole text for its result
  const { metadata } = await completion.generateCompletionWithMeta(model.tokenize(prompt), {
    maxTokens,
    temperature: 0,
    repeatPenalty: false,
    onToken: (chunk) => {
      reported += chunk.length;
    },
    // A server streams text, as the daemon must: take it as node-llama-cpp releases it.
    onTextChunk: (chunk) => {
      _text += chunk;
    },
  });
  // onToken leaves out tokens still held back (partial characters) when maxTokens stops it.
  return metadata.stopReason === 'maxTokens' ? maxTokens : reported;
}

process.on('message', (request: DirectRequest) => {
  const started = performance.now();
  generate(request).then(
    (tokens) => send({ id: request.id, tokens, ms: performance.now() - started }),
    (error: unknown) => send({ id: request.id, error: String(error) }),
  );
});
// Exit explicitly: the loaded binding would keep the event loop alive after the parent is gone.
process.on('disconnect', () => process.exit(0));
send({ ready: true });
