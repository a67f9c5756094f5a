/** Random choices for client traffic, from a uniform [0, 1) source the caller seeds. */
export type Random = () => number;

/** One of `items`, uniformly. */
export const pick = <T>(items: readonly T[], r: Random): T => items[Math.floor(r() * items.length)]!;
/** A whole number from `lo` to `hi`, both included. */
export const int = (lo: number, hi: number, r: Random) => lo + Math.floor(r() * (hi - lo + 1));
/** True with probability `p`. */
export const chance = (p: number, r: Random) => r() < p;
