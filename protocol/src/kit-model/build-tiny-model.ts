/**
 * A valid GGUF v3 llama model with random weights, built in memory from a seed. Real loading code,
 * a real runtime and real tokens for tests and the local network, where no weights can be
 * downloaded. The same options always give the same bytes: the PRNG is integer-only and the normal
 * draws avoid transcendental functions, so no platform's libm can change a bit.
 */
import {
  ALIGNMENT_BYTES,
  encodeGguf,
  type GgufMetadata,
  type GgufTensor,
  TokenType,
  ValueType,
} from './gguf-file.js';

/** Options of {@link buildTinyModel}; every field has a default. */
export type TinyModelOptions = {
  /** PRNG seed; the same seed gives byte-identical files. */
  seed?: number;
  /** Transformer blocks. */
  layers?: number;
  /** Embedding width (must be a multiple of `heads`). */
  width?: number;
  /** Attention heads. */
  heads?: number;
  /** Key/value heads (grouped-query attention when fewer than `heads`). */
  kvHeads?: number;
  /** Feed-forward width. */
  feedForward?: number;
  /** Context length the model advertises, in tokens. */
  contextLength?: number;
  /** Name written to `general.name`. */
  name?: string;
  /**
   * Standard deviation of the output layer (default 0.5: next-token distributions about as sharp
   * as a trained model's, mean entropy ≈ 2 nats at temperature 1, so a verifier can tell one
   * model's tokens from another's). 0.02, like every other matrix, makes them nearly uniform
   * (≈ 6 nats of 6.0 possible): honest and random tokens then look alike to any check.
   */
  outputStd?: number;
};

export const DEFAULT_TINY_MODEL_SEED = 1;
export const DEFAULT_TINY_MODEL_LAYERS = 2;
export const DEFAULT_TINY_MODEL_WIDTH = 64;
export const DEFAULT_TINY_MODEL_HEADS = 4;
export const DEFAULT_TINY_MODEL_FEED_FORWARD = 128;
export const DEFAULT_TINY_MODEL_CONTEXT_TOKENS = 2048;
export const DEFAULT_TINY_MODEL_NAME = 'gpumesh-tiny';
export const DEFAULT_TINY_MODEL_OUTPUT_STD = 0.5;

/** Standard deviation of the random matrices: small, so activations stay finite. */
const WEIGHT_STD = 0.02;

/** Frequent English pairs and words, merged by the SPM tokenizer in score order. */
const MERGES = (
  '▁t he ▁a in er an re on ▁the at en nd ou es is or ing ▁s ▁w ▁o ed ▁c it ▁b ' +
  '▁f ▁p ar ▁m ▁and ▁to ▁of ▁in ll ▁h le ▁d as om ▁is ▁it ▁he ion ic al ▁that st'
).split(' ');

/** Builds the model file's bytes. */
export function buildTinyModel(options: TinyModelOptions = {}): Uint8Array {
  const seed = options.seed ?? DEFAULT_TINY_MODEL_SEED;
  const layers = options.layers ?? DEFAULT_TINY_MODEL_LAYERS;
  const width = options.width ?? DEFAULT_TINY_MODEL_WIDTH;
  const heads = options.heads ?? DEFAULT_TINY_MODEL_HEADS;
  const kvHeads = options.kvHeads ?? heads;
  const feedForward = options.feedForward ?? DEFAULT_TINY_MODEL_FEED_FORWARD;
  const contextLength = options.contextLength ?? DEFAULT_TINY_MODEL_CONTEXT_TOKENS;
  if (width % heads !== 0 || heads % kvHeads !== 0) {
    throw new RangeError(`width ${width} must divide by heads ${heads}, and heads by kvHeads ${kvHeads}`);
  }
  const headDim = width / heads;
  const vocab = buildVocabulary();
  const random = normalSource(seed);
  const matrix = (name: string, rows: number, cols: number, std = WEIGHT_STD): GgufTensor => {
    const values = new Float32Array(rows * cols);
    for (let i = 0; i < values.length; i++) values[i] = random() * std;
    return { name, dims: [rows, cols], values };
  };
  const ones = (name: string, size: number): GgufTensor => ({
    name,
    dims: [size],
    values: new Float32Array(size).fill(1),
  });

  const tensors: GgufTensor[] = [matrix('token_embd.weight', width, vocab.tokens.length)];
  for (let i = 0; i < layers; i++) {
    tensors.push(
      ones(`blk.${i}.attn_norm.weight`, width),
      matrix(`blk.${i}.attn_q.weight`, width, heads * headDim),
      matrix(`blk.${i}.attn_k.weight`, width, kvHeads * headDim),
      matrix(`blk.${i}.attn_v.weight`, width, kvHeads * headDim),
      matrix(`blk.${i}.attn_output.weight`, heads * headDim, width),
      ones(`blk.${i}.ffn_norm.weight`, width),
      matrix(`blk.${i}.ffn_gate.weight`, width, feedForward),
      matrix(`blk.${i}.ffn_up.weight`, width, feedForward),
      matrix(`blk.${i}.ffn_down.weight`, feedForward, width),
    );
  }
  tensors.push(
    ones('output_norm.weight', width),
    matrix('output.weight', width, vocab.tokens.length, options.outputStd ?? DEFAULT_TINY_MODEL_OUTPUT_STD),
  );

  const metadata: GgufMetadata = [
    ['general.architecture', ValueType.string, 'llama'],
    ['general.name', ValueType.string, options.name ?? DEFAULT_TINY_MODEL_NAME],
    ['general.alignment', ValueType.uint32, ALIGNMENT_BYTES],
    ['llama.context_length', ValueType.uint32, contextLength],
    ['llama.embedding_length', ValueType.uint32, width],
    ['llama.block_count', ValueType.uint32, layers],
    ['llama.feed_forward_length', ValueType.uint32, feedForward],
    ['llama.attention.head_count', ValueType.uint32, heads],
    ['llama.attention.head_count_kv', ValueType.uint32, kvHeads],
    ['llama.rope.dimension_count', ValueType.uint32, headDim],
    ['llama.rope.freq_base', ValueType.float32, 10000],
    ['llama.attention.layer_norm_rms_epsilon', ValueType.float32, 1e-5],
    ['llama.vocab_size', ValueType.uint32, vocab.tokens.length],
    ['tokenizer.ggml.model', ValueType.string, 'llama'],
    ['tokenizer.ggml.tokens', ValueType.array, [ValueType.string, vocab.tokens]],
    ['tokenizer.ggml.scores', ValueType.array, [ValueType.float32, vocab.scores]],
    ['tokenizer.ggml.token_type', ValueType.array, [ValueType.int32, vocab.types]],
    ['tokenizer.ggml.unknown_token_id', ValueType.uint32, 0],
    ['tokenizer.ggml.bos_token_id', ValueType.uint32, 1],
    ['tokenizer.ggml.eos_token_id', ValueType.uint32, 2],
    ['tokenizer.ggml.add_bos_token', ValueType.bool, true],
    ['tokenizer.ggml.add_eos_token', ValueType.bool, false],
  ];
  return encodeGguf(metadata, tensors);
}

/** `<unk>`, `<s>`, `</s>`, 256 byte tokens, `▁`, printable ASCII, then merges: any text round-trips. */
function buildVocabulary() {
  const tokens: string[] = ['<unk>', '<s>', '</s>'];
  const types: number[] = [TokenType.unknown, TokenType.control, TokenType.control];
  for (let byte = 0; byte < 256; byte++) {
    tokens.push(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TokenType.byte);
  }
  const pieces = ['▁'];
  for (let code = 0x21; code <= 0x7e; code++) pieces.push(String.fromCharCode(code));
  pieces.push(...MERGES);
  const scores = tokens.map(() => 0);
  pieces.forEach((piece, i) => {
    tokens.push(piece);
    types.push(TokenType.normal);
    // Single characters score lowest; earlier merges score higher, so they are applied first.
    scores.push(piece.length === 1 ? -1000 - i : -i);
  });
  return { tokens, scores, types };
}

/** Gaussian-like draws (Irwin–Hall of 4 uniforms, unit variance) from a mulberry32 stream. */
function normalSource(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // The sum of 4 uniforms has variance 4/12; scaling by sqrt(3) gives variance 1.
  return () => (uniform() + uniform() + uniform() + uniform() - 2) * 1.7320508075688772;
}
