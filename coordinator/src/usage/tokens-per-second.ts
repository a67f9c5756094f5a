/**
 * A request's throughput as reported to clients: completion tokens per second of its latency (from
 * arrival to the last token), to one decimal; null when the latency is unknown (rows from before
 * migration 008) or zero.
 */
export function tokensPerSecond(completionTokens: number, latencyMs: number | null): number | null {
  if (!latencyMs) return null;
  return Math.round((completionTokens * 1000 * 10) / latencyMs) / 10;
}
