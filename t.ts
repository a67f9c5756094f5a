import { getLlama, TokenBias } from 'node-llama-cpp';
import { tinyModelPath } from './node/src/models/tiny-model-path.js';
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath: await tinyModelPath({seed: 11}) });
const ctx = await model.createContext({ sequences: 2, threads: 1, contextSize: 2048 });
const tb = new TokenBias(model.tokenizer); tb.set(2 as any, 'never');
const s = ctx.getSequence();
for (let i = 0; i < 40; i++) {
  await s.clearHistory();
  let n = 0; let last = -1;
  for await (const t of s.evaluate([1, ...model.tokenize('job ' + i)], { temperature: 1, tokenBias: tb, yieldEogToken: true })) { n++; last = t; if (model.isEogToken(t)) break; if (n >= 16) break; }
  if (n < 16 || model.isEogToken(last)) console.log(i, n, last);
}
console.log('done');
