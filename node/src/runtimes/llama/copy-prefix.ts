import type { LlamaContextSequence } from 'node-llama-cpp';

/**
 * A sequence with node-llama-cpp's internal copy, not in its public types; checked on 3.22.1
 * (dist/evaluator/LlamaContext/LlamaContext.js; its LlamaDecisionContext uses it the same way). Under
 * the context's lock it takes the other sequence's tokens and KV cells (llama.cpp's
 * llama_memory_seq_cp: each sequence has its own KV stream there, copied whole over the target's),
 * erases them from `upToTokenIndex` on, and resolves true when the sequence then holds exactly
 * `upToTokenIndex` tokens.
 */
type CopyingSequence = LlamaContextSequence & {
  _copyStateFromOtherSequence?(otherSequence: LlamaContextSequence, upToTokenIndex: number): Promise<boolean>;
};

/**
 * Makes `target` hold the first `tokens` tokens `source` holds by copying their KV state instead of
 * evaluating them again; true when it does. Otherwise the job evaluates what `target` lacks as
 * without a copy: `target` is untouched when the copy is not tried (a node-llama-cpp without the
 * method, a model that needs checkpoints), emptied when it failed.
 */
export async function copyPrefix(
  target: CopyingSequence,
  source: LlamaContextSequence,
  tokens: number,
): Promise<boolean> {
  // A recurrent, hybrid or sliding-window model's KV state can't be cut at any token: the copy would
  // evaluate tokens again from a checkpoint, and cached_tokens would count them as not evaluated.
  if (typeof target._copyStateFromOtherSequence !== 'function' || target.needsCheckpoints) return false;
  // Emptied first: in a KV cache all sequences share (llama.cpp's kv_unified, which 3.22.1 leaves
  // off) the copy adds the source's cells beside the target's own instead of replacing them.
  if (target.nextTokenIndex > 0) await target.clearHistory();
  const copied = await target._copyStateFromOtherSequence(source, tokens).catch(() => false);
  if (copied && target.nextTokenIndex === tokens) return true;
  // A copy that failed may have taken the source's tokens without their KV cells: start clean.
  await target.clearHistory();
  return false;
}
