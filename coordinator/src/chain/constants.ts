/** Chain constants of the network (service-spec.md, "Chain constants"). */

/** The chain id of the network's EVM. */
export const CHAIN_ID = 800_000;

/** The fixed gas price every transaction carries: 150 gwei. */
export const GAS_PRICE_WEI = 150_000_000_000n;

/** Decimals of the native token (wei). */
export const NATIVE_DECIMALS = 18;

/** Decimals of the stable tokens USD.s, USDT.s, USDC.s (like USDT/USDC: 1 unit = 1e-6 USD). */
export const STABLE_DECIMALS = 6;

/** The stable tokens accepted for top-up, each worth 1.0 USD per token. */
export const STABLE_SYMBOLS = ['USD.s', 'USDT.s', 'USDC.s'] as const;
export type StableSymbol = (typeof STABLE_SYMBOLS)[number];

/** Top-up sources: the native token or one of the stables. */
export const PAYMENT_SOURCES = ['native', ...STABLE_SYMBOLS] as const;
export type PaymentSource = (typeof PAYMENT_SOURCES)[number];

/** Gas of a plain native-token transfer. */
export const NATIVE_TRANSFER_GAS = 21_000n;

/** Native token a plain transfer costs in fees: 21,000 gas × 150 gwei. */
export const NATIVE_TRANSFER_FEE_WEI = NATIVE_TRANSFER_GAS * GAS_PRICE_WEI;

/**
 * Gas limit of a stable-token transfer the service sends: above what an ERC-20 transfer uses
 * (~35–52k), fixed so the balance checks run before anything touches the chain. Only gas used is paid.
 */
export const STABLE_TRANSFER_GAS = 100_000n;

/** Default block time of the devnet. */
export const DEFAULT_BLOCK_TIME_S = 0.5;
