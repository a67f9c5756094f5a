/** Wei in one whole native token (18 decimals). */
export const WEI_PER_NATIVE = 10n ** 18n;

/**
 * Converts a native-token amount (wei) to nanousd at `nativeUsdPriceNano` (nanousd per whole token),
 * rounding up so a price converted for comparison or billing never undercharges.
 */
export function nativeToUsdNano(wei: bigint, nativeUsdPriceNano: bigint): bigint {
  const product = wei * nativeUsdPriceNano;
  return (product + WEI_PER_NATIVE - 1n) / WEI_PER_NATIVE;
}

/** Converts nanousd to wei at `nativeUsdPriceNano`, rounding up (the catalog's native price column). */
export function usdNanoToNative(nano: bigint, nativeUsdPriceNano: bigint): bigint {
  if (nativeUsdPriceNano <= 0n) return 0n;
  const product = nano * WEI_PER_NATIVE;
  return (product + nativeUsdPriceNano - 1n) / nativeUsdPriceNano;
}
