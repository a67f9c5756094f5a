/**
 * GGUF v3 files as llama.cpp reads them: metadata, tensor infos, then tensor data aligned to 32
 * bytes, with tensors in F32, F16 or llama.cpp's Q8_0 and Q4_0 block formats (quantized as
 * llama.cpp's reference quantizers do, `quantize_row_q8_0_ref` / `quantize_row_q4_0_ref`).
 */

export const GGUF_VERSION = 3;
export const ALIGNMENT_BYTES = 32;

export const ValueType = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;
export const TokenType = { normal: 1, unknown: 2, control: 3, user: 4, byte: 6 } as const;
/** ggml tensor types written here, with their ids in ggml.h. */
export const GgmlType = { f32: 0, f16: 1, q4_0: 2, q8_0: 8 } as const;
export type GgmlTypeName = keyof typeof GgmlType;

/** Values per quantization block (QK8_0 = QK4_0 = 32). */
const BLOCK_VALUES = 32;

export type GgufMetadata = [key: string, type: number, value: unknown][];
/** A tensor: dims in GGML order (ne0, the row length, first); F32 unless `type` says otherwise. */
export type GgufTensor = { name: string; dims: number[]; values: Float32Array; type?: GgmlTypeName };

/** Encodes a GGUF file's bytes. */
export function encodeGguf(metadata: GgufMetadata, tensors: GgufTensor[]): Uint8Array {
  const out = new ByteWriter();
  out.raw(new TextEncoder().encode('GGUF'));
  out.u32(GGUF_VERSION);
  out.u64(tensors.length);
  out.u64(metadata.length);
  for (const [key, type, value] of metadata) {
    out.string(key);
    out.u32(type);
    writeValue(out, type, value);
  }
  const data = tensors.map(encodeTensorData);
  let offset = 0;
  tensors.forEach((tensor, i) => {
    out.string(tensor.name);
    out.u32(tensor.dims.length);
    for (const dim of tensor.dims) out.u64(dim);
    out.u32(GgmlType[tensor.type ?? 'f32']);
    out.u64(offset);
    offset += alignUp(data[i]!.length);
  });
  out.padTo(ALIGNMENT_BYTES);
  for (const bytes of data) {
    out.raw(bytes);
    out.padTo(ALIGNMENT_BYTES);
  }
  return out.bytes();
}

/** One tensor's data in its type's layout. */
export function encodeTensorData(tensor: GgufTensor): Uint8Array {
  const { values } = tensor;
  const type = tensor.type ?? 'f32';
  if (type === 'f32') {
    const bytes = new Uint8Array(values.length * 4);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
    return bytes;
  }
  if (type === 'f16') {
    const bytes = new Uint8Array(values.length * 2);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < values.length; i++) view.setUint16(i * 2, toHalf(values[i]!), true);
    return bytes;
  }
  if (tensor.dims[0]! % BLOCK_VALUES !== 0) {
    throw new RangeError(`${tensor.name}: rows of ${tensor.dims[0]} values do not split into blocks of 32`);
  }
  return type === 'q8_0' ? quantizeQ8_0(values) : quantizeQ4_0(values);
}

/** Q8_0: per 32 values, an f16 scale d = max|x| / 127 and 32 int8 round(x / d). 34 bytes. */
function quantizeQ8_0(values: Float32Array): Uint8Array {
  const blocks = values.length / BLOCK_VALUES;
  const bytes = new Uint8Array(blocks * 34);
  const view = new DataView(bytes.buffer);
  for (let b = 0; b < blocks; b++) {
    const at = b * BLOCK_VALUES;
    let amax = 0;
    for (let j = 0; j < BLOCK_VALUES; j++) amax = Math.max(amax, Math.abs(values[at + j]!));
    const d = amax / 127;
    const id = d ? 1 / d : 0;
    view.setUint16(b * 34, toHalf(d), true);
    for (let j = 0; j < BLOCK_VALUES; j++) view.setInt8(b * 34 + 2 + j, roundHalfAway(values[at + j]! * id));
  }
  return bytes;
}

/**
 * Q4_0: per 32 values, an f16 scale d = max / −8 (max: the value of largest magnitude, signed)
 * and 4-bit q = min(15, trunc(x / d + 8.5)); value j in the low nibble of byte j, value 16 + j in
 * its high nibble. 18 bytes.
 */
function quantizeQ4_0(values: Float32Array): Uint8Array {
  const blocks = values.length / BLOCK_VALUES;
  const bytes = new Uint8Array(blocks * 18);
  const view = new DataView(bytes.buffer);
  const half = BLOCK_VALUES / 2;
  for (let b = 0; b < blocks; b++) {
    const at = b * BLOCK_VALUES;
    let amax = 0;
    let max = 0;
    for (let j = 0; j < BLOCK_VALUES; j++) {
      const v = values[at + j]!;
      if (Math.abs(v) > amax) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = max / -8;
    const id = d ? 1 / d : 0;
    view.setUint16(b * 18, toHalf(d), true);
    for (let j = 0; j < half; j++) {
      const lo = Math.min(15, Math.trunc(values[at + j]! * id + 8.5));
      const hi = Math.min(15, Math.trunc(values[at + half + j]! * id + 8.5));
      bytes[b * 18 + 2 + j] = lo | (hi << 4);
    }
  }
  return bytes;
}

/** C's roundf: halves away from zero. */
function roundHalfAway(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE binary16 bits of a float, rounded to nearest even (as ggml's FP32→FP16). */
export function toHalf(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    if (rest > midpoint || (rest === midpoint && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return sign | half;
}

class ByteWriter {
  private chunks: Uint8Array[] = [];
  length = 0;
  private push(bytes: Uint8Array) {
    this.chunks.push(bytes);
    this.length += bytes.length;
  }
  private view(size: number, write: (view: DataView) => void) {
    const bytes = new Uint8Array(size);
    write(new DataView(bytes.buffer));
    this.push(bytes);
  }
  u32(value: number) {
    this.view(4, (v) => v.setUint32(0, value, true));
  }
  i32(value: number) {
    this.view(4, (v) => v.setInt32(0, value, true));
  }
  u64(value: number) {
    this.view(8, (v) => v.setBigUint64(0, BigInt(value), true));
  }
  f32(value: number) {
    this.view(4, (v) => v.setFloat32(0, value, true));
  }
  bool(value: boolean) {
    this.push(Uint8Array.of(value ? 1 : 0));
  }
  string(value: string) {
    const bytes = new TextEncoder().encode(value);
    this.u64(bytes.length);
    this.push(bytes);
  }
  raw(bytes: Uint8Array) {
    this.push(bytes);
  }
  padTo(alignment: number) {
    const pad = (alignment - (this.length % alignment)) % alignment;
    if (pad > 0) this.push(new Uint8Array(pad));
  }
  bytes(): Uint8Array {
    return Buffer.concat(this.chunks);
  }
}

function writeValue(out: ByteWriter, type: number, value: unknown) {
  switch (type) {
    case ValueType.uint32:
      return out.u32(value as number);
    case ValueType.int32:
      return out.i32(value as number);
    case ValueType.float32:
      return out.f32(value as number);
    case ValueType.bool:
      return out.bool(value as boolean);
    case ValueType.string:
      return out.string(value as string);
    case ValueType.array: {
      const [elementType, elements] = value as [number, unknown[]];
      out.u32(elementType);
      out.u64(elements.length);
      for (const element of elements) writeValue(out, elementType, element);
      return;
    }
    default:
      throw new Error(`unsupported GGUF value type ${type}`);
  }
}

function alignUp(size: number): number {
  return Math.ceil(size / ALIGNMENT_BYTES) * ALIGNMENT_BYTES;
}
