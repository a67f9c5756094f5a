import { BaseError, InsufficientFundsError } from 'viem';
import { ApiError } from '../errors.js';

const INSUFFICIENT_FUNDS = /insufficient funds|exceeds transaction sender account balance/i;

/**
 * Turns anything a viem call threw into our ApiError, so no RPC text reaches a client:
 * a balance too low for value + gas → insufficient_funds; everything else → chain_unavailable.
 * ApiErrors pass through unchanged.
 */
export function wrapChainError(error: unknown, param?: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof BaseError) {
    const insufficient =
      error.walk((e) => e instanceof InsufficientFundsError) ||
      error.walk((e) => e instanceof BaseError && INSUFFICIENT_FUNDS.test(e.details ?? ''));
    if (insufficient) {
      return new ApiError(
        'insufficient_funds',
        'The wallet does not hold enough of the token for this amount plus gas.',
        param ? { param } : {},
      );
    }
  }
  return new ApiError('chain_unavailable', 'The chain did not answer; try again shortly.');
}
