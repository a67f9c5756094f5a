/** One USD in nanousd. */
export const USD = 1_000_000_000n;
/** The platform fee the router tests configure (platformFeeBps). */
export const FEE_BPS = 500;

/**
 * What a request costs the user, in nanousd, for `prompt` and `completion` tokens at `inUsd` and
 * `outUsd` USD per million: the provider's price rounded up, plus the FEE_BPS fee rounded up.
 */
export function expectedNano(prompt: number, completion: number, inUsd: bigint, outUsd: bigint): bigint {
  const provider = (BigInt(prompt) * inUsd * USD + BigInt(completion) * outUsd * USD + 999_999n) / 1_000_000n;
  const fee = (provider * BigInt(FEE_BPS) + 9_999n) / 10_000n;
  return provider + fee;
}
