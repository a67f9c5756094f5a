/**
 * The weights of the substitution study (bench/substitution.ts): the files the catalog pins for a
 * model (each hash checked against its pin), and the "weights plus small noise" liar — the pinned
 * F16 file with Gaussian noise of a share of each tensor's RMS added to every weight, re-encoded as
 * F16 (our writer's `toHalf`) in a copy of the file (metadata, tokenizer and layout unchanged).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { toHalf } from '../protocol/src/kit-model/gguf-file.js';

export type PinnedFile = { quant: string; path: string; sha256: string };

type CatalogEntry = { id: string; files?: { quant: string; file: string; sha256?: string }[] };

/** The files `catalog` pins for `modelId`, found in `dir`; throws naming both hashes on a mismatch. */
export function pinnedFiles(catalog: string, modelId: string, dir: string): Record<string, PinnedFile> {
  const { models } = JSON.parse(readFileSync(catalog, 'utf8')) as { models: CatalogEntry[] };
  const entry = models.find((m) => m.id === modelId);
  if (!entry?.files) throw new Error(`${catalog} has no files for ${modelId}`);
  const out: Record<string, PinnedFile> = {};
  for (const f of entry.files) {
    const file = path.join(dir, f.file);
    const sha256 = sha256Of(file);
    if (f.sha256 && sha256 !== f.sha256) {
      throw new Error(`${file} has sha256 ${sha256}; the catalog pins ${f.sha256}`);
    }
    out[f.quant] = { quant: f.quant, path: file, sha256 };
  }
  return out;
}

export function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** A seeded standard normal (mulberry32 and Box–Muller). */
export function gaussian(seed: number): () => number {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/**
 * Writes `source` (a GGUF whose tensors are F16 or F32) to `target` with each weight w of a tensor
 * of RMS r replaced by w + share × r × N(0, 1). Returns the tensors changed.
 */
export function writeNoisyCopy(source: string, target: string, share: number, seed: number): number {
  const bytes = new Uint8Array(readFileSync(source));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { tensors, dataStart } = readLayout(view);
  const normal = gaussian(seed);
  let changed = 0;
  for (const t of tensors) {
    const count = t.dims.reduce((x, y) => x * y, 1);
    const at = dataStart + t.offset;
    if (t.type !== 0 && t.type !== 1) throw new Error(`${source}: tensor ${t.name} is not F16 or F32`);
    const get = (i: number) =>
      t.type === 0 ? view.getFloat32(at + 4 * i, true) : fromHalf(view.getUint16(at + 2 * i, true));
    let squares = 0;
    for (let i = 0; i < count; i++) squares += get(i) ** 2;
    const sigma = share * Math.sqrt(squares / count);
    for (let i = 0; i < count; i++) {
      const w = get(i) + sigma * normal();
      if (t.type === 0) view.setFloat32(at + 4 * i, w, true);
      else view.setUint16(at + 2 * i, toHalf(w), true);
    }
    changed++;
  }
  writeFileSync(target, bytes);
  return changed;
}

type TensorInfo = { name: string; dims: number[]; type: number; offset: number };

/** The tensor infos and where their data begins (GGUF v3; the metadata is skipped). */
function readLayout(view: DataView): { tensors: TensorInfo[]; dataStart: number } {
  let at = 0;
  const u32 = () => {
    at += 4;
    return view.getUint32(at - 4, true);
  };
  const u64 = () => {
    at += 8;
    return Number(view.getBigUint64(at - 8, true));
  };
  const str = () => {
    const n = u64();
    at += n;
    return new TextDecoder().decode(new Uint8Array(view.buffer, view.byteOffset + at - n, n));
  };
  const sizes: Record<number, number> = {
    0: 1,
    1: 1,
    2: 2,
    3: 2,
    4: 4,
    5: 4,
    6: 4,
    7: 1,
    10: 8,
    11: 8,
    12: 8,
  };
  const skip = (type: number): void => {
    if (type === 8) str();
    else if (type === 9) {
      const inner = u32();
      const n = u64();
      for (let i = 0; i < n; i++) skip(inner);
    } else if (sizes[type] !== undefined) at += sizes[type]!;
    else throw new Error(`unknown GGUF value type ${type}`);
  };
  if (u32() !== 0x46554747) throw new Error('not a GGUF file');
  u32();
  const tensorCount = u64();
  const kvCount = u64();
  let alignment = 32;
  for (let i = 0; i < kvCount; i++) {
    const key = str();
    const type = u32();
    if (key === 'general.alignment' && type === 4) alignment = u32();
    else skip(type);
  }
  const tensors: TensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = str();
    const dims = Array.from({ length: u32() }, () => u64());
    tensors.push({ name, dims, type: u32(), offset: u64() });
  }
  return { tensors, dataStart: Math.ceil(at / alignment) * alignment };
}

/** The float an IEEE binary16 holds. */
function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >>> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (mantissa / 1024);
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exponent - 15) * (1 + mantissa / 1024);
}
