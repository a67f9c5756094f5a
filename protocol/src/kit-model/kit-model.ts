import { createHash } from 'node:crypto';
import { buildTinyModel, type TinyModelOptions } from './build-tiny-model.js';

/**
 * The conformance kit's model (NODE_PROTOCOL.md §13 "The kit model"): a generated GGUF v3 llama
 * model, 2 blocks of width 64 with f32 weights and a sharp output layer, so its next-token
 * distributions are informative. Anyone gets the same bytes from `gpumesh-conformance kit-model`;
 * the `verify` scenarios score completions against it and compare with protocol/vectors/verify/.
 */
export const KIT_MODEL_OPTIONS = {
  seed: 20_261_125,
  outputStd: 0.5,
  name: 'gpumesh-kit',
} as const satisfies TinyModelOptions;

/** The kit model's file name, and the id a node usually serves it under. */
export const KIT_MODEL_FILE = 'gpumesh-kit.gguf';

/** sha256 of {@link buildKitModel}'s bytes: the `sha256` a node's manifest gives the kit model. */
export const KIT_MODEL_SHA256 = '87c1f749819809dc33fbf9d7cf3ed3dd6bc42859df86beb3783d05a099f4fb84';

/** The kit model's bytes (about 0.5 MB; the same on every platform). */
export function buildKitModel(): Uint8Array {
  return buildTinyModel(KIT_MODEL_OPTIONS);
}

/** sha256 of `bytes`, lowercase hex (as in a manifest's `sha256`). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
