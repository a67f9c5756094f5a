/**
 * Checks that llama.cpp runs the exported GGUF as PyTorch ran the trained weights: for a rendered
 * conversation, each position's most likely next tokens and their log-probabilities under
 * node-llama-cpp (the file) and under logits.py (the weights) must agree — the same top token, and
 * log-probabilities within the file type's tolerance. A wrong rope layout or a transposed matrix
 * fails it at once.
 *
 *   parity.ts --gguf F16.gguf --weights .train/weights [--tolerance 0.05]
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { getLlama, type Token } from 'node-llama-cpp';
import { vocabularySize } from '../../node/src/runtimes/llama/loaded-model.js';

const { values } = parseArgs({
  options: {
    gguf: { type: 'string' },
    weights: { type: 'string' },
    tolerance: { type: 'string', default: '0.05' },
    text: { type: 'string', default: 'What is 12 + 30? The answer is 42. Convert 3 kilometers to meters.' },
  },
});

const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath: values.gguf! });
const context = await model.createContext({ contextSize: 512, threads: 1 });
const ids = [model.tokens.bos!, ...model.tokenize(values.text!)] as Token[];
const sequence = context.getSequence();
const output = await sequence.controlledEvaluate(
  ids.map(
    (t) =>
      [t, { generateNext: { logits: true, totalLogitWeight: true, options: { temperature: 0 } } }] as const,
  ),
);
const here = dirname(fileURLToPath(import.meta.url));
const reference = JSON.parse(
  execFileSync('/usr/bin/python3', [
    join(here, 'logits.py'),
    '--weights',
    values.weights!,
    '--vocab-size',
    String(vocabularySize(model)),
    '--ids',
    ids.join(','),
  ]).toString(),
) as [number, number][][];
let worst = 0;
let topMismatch = 0;
ids.forEach((_, i) => {
  const next = output[i]?.next;
  const logits = next!.logits!;
  const max = [...logits.values()][0]!;
  const logprob = (t: number) => logits.get(t as Token)! - max - Math.log(next!.totalLogitWeight!);
  const [topToken] = logits.keys();
  if (topToken !== reference[i]![0]![0]) topMismatch++;
  for (const [token, lp] of reference[i]!.slice(0, 3)) worst = Math.max(worst, Math.abs(logprob(token) - lp));
});
console.log(JSON.stringify({ positions: ids.length, topMismatch, worstLogprobGap: worst }));
await llama.dispose();
if (topMismatch > 0 || worst > Number(values.tolerance)) process.exit(1);
