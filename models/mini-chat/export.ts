/**
 * Writes trained weights as GGUF files llama.cpp runs: F16, Q8_0 and Q4_0 (llama.cpp's block
 * formats, quantized as its reference quantizers do), with the vocabulary and the ChatML template.
 *
 *   export.ts --weights .train/weights --vocab .train/vocab.json --out models/mini-chat \
 *     [--name gpumesh-mini-chat] [--types f16,q8_0,q4_0]
 *
 * Prints each file's size and sha256 (the catalog pins them).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { GgmlTypeName } from '../../protocol/src/kit-model/gguf-file.js';
import { chatModelGguf, type ModelShape, type Vocabulary, type Weights } from './chat-model-gguf.js';

const { values } = parseArgs({
  options: {
    weights: { type: 'string' },
    vocab: { type: 'string' },
    out: { type: 'string' },
    name: { type: 'string', default: 'gpumesh-mini-chat' },
    types: { type: 'string', default: 'f16,q8_0,q4_0' },
  },
});

type Manifest = { shape: ModelShape; tensors: { name: string; dims: number[] }[] };

/** Reads `<path>.json` and `<path>.bin` (float32 tensors in order) as named weights. */
export function readWeights(path: string): { shape: ModelShape; weights: Weights } {
  const manifest = JSON.parse(readFileSync(`${path}.json`, 'utf8')) as Manifest;
  const bin = readFileSync(`${path}.bin`);
  const floats = new Float32Array(bin.buffer, bin.byteOffset, bin.byteLength / 4);
  const weights: Weights = new Map();
  let at = 0;
  for (const { name, dims } of manifest.tensors) {
    const size = dims.reduce((a, b) => a * b, 1);
    weights.set(name, { dims, values: floats.slice(at, at + size) });
    at += size;
  }
  if (at !== floats.length) throw new Error(`${path}.bin holds ${floats.length} floats, the manifest ${at}`);
  return { shape: manifest.shape, weights };
}

const { shape, weights } = readWeights(values.weights!);
const vocabulary = JSON.parse(readFileSync(values.vocab!, 'utf8')) as Vocabulary;
const label: Record<string, string> = { f32: 'F32', f16: 'F16', q8_0: 'Q8_0', q4_0: 'Q4_0' };
for (const type of values.types!.split(',') as GgmlTypeName[]) {
  const bytes = chatModelGguf({ name: values.name!, shape, vocabulary, weights, type });
  const file = join(values.out!, `${values.name}-${label[type]}.gguf`);
  writeFileSync(file, bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  console.log(JSON.stringify({ quant: label[type], file, sizeBytes: bytes.length, sha256 }));
}
