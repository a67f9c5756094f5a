/**
 * The wait before reconnect attempt `attempt` (0 first): exponential from `minMs`, capped at
 * `maxMs`, with jitter over the upper half so a fleet of nodes does not reconnect in step after a
 * coordinator restart. `random` returns [0, 1).
 */
export function reconnectDelayMs(
  attempt: number,
  minMs: number,
  maxMs: number,
  random: () => number,
): number {
  const base = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
  return Math.round(base / 2 + (random() * base) / 2);
}
