/**
 * The quantisation of the weights a node serves, as OpenRouter names it (`provider.quantizations`,
 * the endpoints listing's `quantization`), from the GGUF type the catalog records for the file's
 * SHA-256 (catalog/catalog.ts `quantOf`, carried on the offer as `quant`).
 */

/** OpenRouter's quantisation classes (its SDK's `Quantization`). */
export const QUANTIZATIONS = [
  'int4',
  'int8',
  'fp4',
  'mxfp4',
  'nvfp4',
  'fp6',
  'fp8',
  'mxfp8',
  'fp16',
  'bf16',
  'fp32',
  'unknown',
] as const;
export type Quantization = (typeof QUANTIZATIONS)[number];

/**
 * llama.cpp's GGUF file types, each with the OpenRouter class its weights are stored in. A type
 * OpenRouter has no class for (2-, 3-, 5- and 6-bit integer types, the ternary ones) is `unknown`,
 * never rounded to a neighbour: a client may ask for it by its GGUF name instead.
 */
const GGUF_CLASS: Readonly<Record<string, Quantization>> = {
  F32: 'fp32',
  F16: 'fp16',
  BF16: 'bf16',
  Q8_0: 'int8',
  Q4_0: 'int4',
  Q4_1: 'int4',
  Q4_K_S: 'int4',
  Q4_K_M: 'int4',
  IQ4_NL: 'int4',
  IQ4_XS: 'int4',
  MXFP4: 'mxfp4',
  Q5_0: 'unknown',
  Q5_1: 'unknown',
  Q5_K_S: 'unknown',
  Q5_K_M: 'unknown',
  Q6_K: 'unknown',
  Q2_K: 'unknown',
  Q3_K_S: 'unknown',
  Q3_K_M: 'unknown',
  Q3_K_L: 'unknown',
  IQ1_S: 'unknown',
  IQ1_M: 'unknown',
  IQ2_XXS: 'unknown',
  IQ2_XS: 'unknown',
  IQ2_S: 'unknown',
  IQ2_M: 'unknown',
  IQ3_XXS: 'unknown',
  IQ3_XS: 'unknown',
  IQ3_S: 'unknown',
  IQ3_M: 'unknown',
  TQ1_0: 'unknown',
  TQ2_0: 'unknown',
};

/** The OpenRouter class of a GGUF type (any case); `unknown` for none or one it has no class for. */
export function quantizationOf(quant: string | undefined): Quantization {
  return (quant && GGUF_CLASS[quant.toUpperCase()]) || 'unknown';
}

/**
 * Whether `name` may be asked for in `provider.quantizations`: one of OpenRouter's classes
 * (lowercase, as it takes them) or a GGUF type name (any case, matched against the file's own type).
 */
export function isQuantizationName(name: string): boolean {
  return (QUANTIZATIONS as readonly string[]).includes(name) || name.toUpperCase() in GGUF_CLASS;
}

/**
 * Whether an offer whose file is of GGUF type `quant` (undefined: the catalog does not know the
 * file) is one of `wanted`: by its OpenRouter class, or by its GGUF type name.
 */
export function quantizationMatches(quant: string | undefined, wanted: readonly string[]): boolean {
  const quantClass = quantizationOf(quant);
  const gguf = quant?.toUpperCase();
  return wanted.some((w) => w === quantClass || (gguf !== undefined && w.toUpperCase() === gguf));
}
