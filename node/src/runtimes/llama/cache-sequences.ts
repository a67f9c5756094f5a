/** The share of the memory free after a model loads that its prefix cache takes by default. */
export const DEFAULT_PREFIX_CACHE_SHARE = 1 / 8;
/** The most sequences a model keeps for recent conversations beyond those its jobs run on. */
export const MAX_CACHE_SEQUENCES = 4;

/**
 * How many sequences beyond the concurrent jobs' a model's context gets to keep recent
 * conversations' KV state (the prefix cache, NODE_PROTOCOL.md §9 "Prefix cache"): as many as
 * `budgetBytes` pays for at `sequenceBytes` each (one sequence's KV cache at the context length),
 * at most {@link MAX_CACHE_SEQUENCES}. A budget of 0 keeps none: the job sequences still keep what
 * they last held.
 */
export function cacheSequences(options: { budgetBytes: number; sequenceBytes: number }): number {
  const { budgetBytes, sequenceBytes } = options;
  if (budgetBytes <= 0) return 0;
  if (sequenceBytes <= 0) return MAX_CACHE_SEQUENCES;
  return Math.min(MAX_CACHE_SEQUENCES, Math.floor(budgetBytes / sequenceBytes));
}
