/** Sequences (jobs at once) a model gets by default at most, however much VRAM is free. */
export const MAX_AUTO_SEQUENCES = 16;
/** The share of free VRAM the contexts may take (the rest: fragmentation, the driver, other apps). */
const VRAM_SHARE = 0.9;

/**
 * How many sequences (jobs at once) of one context fit the VRAM left after the weights loaded:
 * each sequence holds its own KV cache of `sequenceVramBytes` (node-llama-cpp's estimate for one
 * sequence of the context size). At least 1, at most {@link MAX_AUTO_SEQUENCES}.
 */
export function sequencesForVram(options: { freeVramBytes: number; sequenceVramBytes: number }): number {
  const { freeVramBytes, sequenceVramBytes } = options;
  if (sequenceVramBytes <= 0) return MAX_AUTO_SEQUENCES;
  const fit = Math.floor((freeVramBytes * VRAM_SHARE) / sequenceVramBytes);
  return Math.max(1, Math.min(MAX_AUTO_SEQUENCES, fit));
}
