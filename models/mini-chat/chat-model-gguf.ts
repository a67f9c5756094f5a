/**
 * The mini-chat model as a GGUF file llama.cpp runs unchanged: llama architecture, the learned
 * SentencePiece-style vocabulary with byte fallback, a ChatML chat template (node-llama-cpp resolves
 * it to its ChatML wrapper) whose end of turn, <|im_end|>, is the end-of-sequence token, and the
 * weights in F32, F16, Q8_0 or Q4_0 (norms stay F32, as llama.cpp's own converter keeps them).
 */
import {
  ALIGNMENT_BYTES,
  encodeGguf,
  type GgmlTypeName,
  type GgufMetadata,
  type GgufTensor,
  ValueType,
} from '../../protocol/src/kit-model/gguf-file.js';

export type Vocabulary = { tokens: string[]; scores: number[]; types: number[] };

export type ModelShape = {
  layers: number;
  width: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  contextLength: number;
  ropeFreqBase: number;
};

/** Trained weights by GGUF tensor name, with their dims in GGML order. */
export type Weights = Map<string, { dims: number[]; values: Float32Array }>;

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** general.file_type of each weight type (llama_ftype). */
const FILE_TYPE: Record<GgmlTypeName, number> = { f32: 0, f16: 1, q4_0: 2, q8_0: 7 };

export function chatModelGguf(options: {
  name: string;
  shape: ModelShape;
  vocabulary: Vocabulary;
  weights: Weights;
  type: GgmlTypeName;
  licence?: string;
}): Uint8Array {
  const { shape, vocabulary, weights, type } = options;
  const headDim = shape.width / shape.heads;
  const tokenId = (piece: string) => {
    const id = vocabulary.tokens.indexOf(piece);
    if (id < 0) throw new Error(`the vocabulary has no ${piece}`);
    return id;
  };
  const metadata: GgufMetadata = [
    ['general.architecture', ValueType.string, 'llama'],
    ['general.name', ValueType.string, options.name],
    ['general.license', ValueType.string, options.licence ?? 'Apache-2.0'],
    ['general.file_type', ValueType.uint32, FILE_TYPE[type]],
    ['general.alignment', ValueType.uint32, ALIGNMENT_BYTES],
    ['llama.context_length', ValueType.uint32, shape.contextLength],
    ['llama.embedding_length', ValueType.uint32, shape.width],
    ['llama.block_count', ValueType.uint32, shape.layers],
    ['llama.feed_forward_length', ValueType.uint32, shape.feedForward],
    ['llama.attention.head_count', ValueType.uint32, shape.heads],
    ['llama.attention.head_count_kv', ValueType.uint32, shape.kvHeads],
    ['llama.rope.dimension_count', ValueType.uint32, headDim],
    ['llama.rope.freq_base', ValueType.float32, shape.ropeFreqBase],
    ['llama.attention.layer_norm_rms_epsilon', ValueType.float32, 1e-5],
    ['llama.vocab_size', ValueType.uint32, vocabulary.tokens.length],
    ['tokenizer.ggml.model', ValueType.string, 'llama'],
    ['tokenizer.ggml.tokens', ValueType.array, [ValueType.string, vocabulary.tokens]],
    ['tokenizer.ggml.scores', ValueType.array, [ValueType.float32, vocabulary.scores]],
    ['tokenizer.ggml.token_type', ValueType.array, [ValueType.int32, vocabulary.types]],
    ['tokenizer.ggml.unknown_token_id', ValueType.uint32, tokenId('<unk>')],
    ['tokenizer.ggml.bos_token_id', ValueType.uint32, tokenId('<s>')],
    ['tokenizer.ggml.eos_token_id', ValueType.uint32, tokenId('<|im_end|>')],
    ['tokenizer.ggml.padding_token_id', ValueType.uint32, tokenId('</s>')],
    ['tokenizer.ggml.add_bos_token', ValueType.bool, true],
    ['tokenizer.ggml.add_eos_token', ValueType.bool, false],
    ['tokenizer.ggml.add_space_prefix', ValueType.bool, false],
    ['tokenizer.chat_template', ValueType.string, CHATML_TEMPLATE],
  ];
  const tensors: GgufTensor[] = [];
  for (const [name, { dims, values }] of weights) {
    tensors.push({ name, dims, values, type: dims.length === 1 ? 'f32' : type });
  }
  return encodeGguf(metadata, tensors);
}

/** The tensor names of a llama model of `layers` blocks, in the order llama.cpp's converter writes them. */
export function tensorNames(layers: number): string[] {
  const names = ['token_embd.weight'];
  for (let i = 0; i < layers; i++) {
    for (const part of [
      'attn_norm',
      'attn_q',
      'attn_k',
      'attn_v',
      'attn_output',
      'ffn_norm',
      'ffn_gate',
      'ffn_up',
      'ffn_down',
    ]) {
      names.push(`blk.${i}.${part}.weight`);
    }
  }
  names.push('output_norm.weight', 'output.weight');
  return names;
}

/** Zero weights of the right shapes: a file that loads, for its tokenizer alone. */
export function emptyWeights(shape: ModelShape, vocabularySize: number): Weights {
  const { width, heads, kvHeads, feedForward } = shape;
  const kv = (width / heads) * kvHeads;
  const dims: Record<string, number[]> = {
    token_embd: [width, vocabularySize],
    attn_norm: [width],
    attn_q: [width, width],
    attn_k: [width, kv],
    attn_v: [width, kv],
    attn_output: [width, width],
    ffn_norm: [width],
    ffn_gate: [width, feedForward],
    ffn_up: [width, feedForward],
    ffn_down: [feedForward, width],
    output_norm: [width],
    output: [width, vocabularySize],
  };
  const weights: Weights = new Map();
  for (const name of tensorNames(shape.layers)) {
    const part = name.replace(/^blk\.\d+\./, '').replace(/\.weight$/, '');
    const d = dims[part]!;
    const values = new Float32Array(d.reduce((a, b) => a * b, 1));
    if (d.length === 1) values.fill(1);
    weights.set(name, { dims: d, values });
  }
  return weights;
}
