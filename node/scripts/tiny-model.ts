// Writes the generated tiny GGUF llama model: `npm run -w node tiny-model -- --out models/tiny.gguf --seed 1`.
import { parseArgs } from 'node:util';
import { writeTinyModel } from '../src/models/write-tiny-model.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'models/gpumesh-tiny.gguf' },
    seed: { type: 'string', default: '1' },
    layers: { type: 'string' },
    width: { type: 'string' },
  },
});
const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
const { path, bytes } = await writeTinyModel({
  path: values.out!,
  seed: Number(values.seed),
  layers: number(values.layers),
  width: number(values.width),
});
console.log(`wrote ${path} (${bytes} bytes)`);
