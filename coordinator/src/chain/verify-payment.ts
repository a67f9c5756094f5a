import {
  type Address,
  BaseError,
  getAddress,
  type Hash,
  isAddressEqual,
  parseAbi,
  parseEventLogs,
  TransactionNotFoundError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from 'viem';
import { ApiError } from '../errors.js';
import type { ChainContext } from './chain-context.js';
import type { PaymentSource, StableSymbol } from './constants.js';
import { wrapChainError } from './wrap-chain-error.js';

const TRANSFER_EVENT = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);
const HASH_PATTERN = /^0x[0-9a-fA-F]{64}$/;

export type VerifyPaymentParameters = {
  /** The transaction hash the user sent (the paymentId). */
  hash: string;
  source: PaymentSource;
  /** The user's proxy wallet: only value sent to it counts. */
  recipient: Address;
  /** Stable token addresses; a source without one is refused (invalid_request). */
  tokens: Readonly<Partial<Record<StableSymbol, Address>>>;
  /** Blocks that must include the transaction, counting its own (1 = mined). */
  confirmations: number;
};

/** One movement of value into the recipient: who sent it, and how much (smallest unit). */
export type PaymentTransfer = { from: Address; value: bigint };

export type VerifiedPayment =
  /** Seen but not yet confirmed (or not yet mined): ask again later. */
  | { status: 'pending'; hash: Hash; amount: bigint | null; confirmations: number }
  /**
   * Mined, successful, confirmed: `amount` in the source's smallest unit (wei or 1e-6 token), the
   * sum of `transfers` — each with its sender, so a caller can tell a deposit from outside from
   * the service's own wallets moving tokens (see findManagedAddresses).
   */
  | {
      status: 'confirmed';
      hash: Hash;
      amount: bigint;
      transfers: PaymentTransfer[];
      confirmations: number;
      blockNumber: bigint;
    };

/**
 * Reads a payment from the chain and returns what it paid to `recipient` in `source`:
 * the native value of the transaction when source is native, else the sum of the source token's
 * Transfer logs whose `to` is the recipient. Never trusts the client's figures.
 * Errors (ApiError): invalid_request (malformed hash), payment_not_found, payment_failed (reverted),
 * payment_wrong_token (value reached the recipient, but not in `source`), payment_wrong_recipient
 * (nothing reached the recipient), chain_unavailable.
 */
export async function verifyPayment(
  { client }: ChainContext,
  { hash: rawHash, source, recipient, tokens, confirmations: required }: VerifyPaymentParameters,
): Promise<VerifiedPayment> {
  if (!HASH_PATTERN.test(rawHash)) {
    throw new ApiError('invalid_request', 'paymentId must be a transaction hash: 0x and 64 hex digits.', {
      param: 'paymentId',
    });
  }
  const hash = rawHash.toLowerCase() as Hash;
  try {
    let receipt: TransactionReceipt;
    try {
      receipt = await client.getTransactionReceipt({ hash });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await client.getTransaction({ hash });
      } catch (inner) {
        if (isNotFound(inner)) {
          throw new ApiError('payment_not_found', 'No transaction with this hash is known to the chain.', {
            param: 'paymentId',
          });
        }
        throw inner;
      }
      return { status: 'pending', hash, amount: null, confirmations: 0 };
    }
    if (receipt.status !== 'success') {
      throw new ApiError('payment_failed', 'The transaction failed on chain; it paid nothing.', {
        param: 'paymentId',
      });
    }
    // The head read now, not viem's cached one (kept for its polling interval): a receipt newer
    // than a cached head would count 0 confirmations and answer "pending" for a mined payment.
    const [transaction, head] = await Promise.all([
      client.getTransaction({ hash }),
      client.getBlockNumber({ cacheTime: 0 }),
    ]);
    const nativeToRecipient =
      transaction.to && isAddressEqual(transaction.to, recipient) ? transaction.value : 0n;
    const transfersToRecipient = parseEventLogs({ abi: TRANSFER_EVENT, logs: receipt.logs }).filter((log) =>
      isAddressEqual(log.args.to, recipient),
    );
    let transfers: PaymentTransfer[];
    if (source === 'native') {
      transfers =
        nativeToRecipient > 0n ? [{ from: getAddress(transaction.from), value: nativeToRecipient }] : [];
    } else {
      const configured = tokens[source];
      if (!configured) {
        throw new ApiError('invalid_request', `${source} is not accepted here.`, { param: 'source' });
      }
      const token = getAddress(configured);
      transfers = transfersToRecipient
        .filter((log) => isAddressEqual(log.address, token) && log.args.value > 0n)
        .map((log) => ({ from: getAddress(log.args.from), value: log.args.value }));
    }
    const amount = transfers.reduce((sum, t) => sum + t.value, 0n);
    if (amount === 0n) {
      if (nativeToRecipient > 0n || transfersToRecipient.some((log) => log.args.value > 0n)) {
        throw new ApiError(
          'payment_wrong_token',
          `The transaction paid your proxy wallet, but not in ${source}.`,
          {
            param: 'source',
          },
        );
      }
      throw new ApiError('payment_wrong_recipient', 'The transaction paid nothing to your proxy wallet.', {
        param: 'paymentId',
      });
    }
    const confirmations = Number(head - receipt.blockNumber + 1n);
    if (confirmations < required) return { status: 'pending', hash, amount, confirmations };
    return { status: 'confirmed', hash, amount, transfers, confirmations, blockNumber: receipt.blockNumber };
  } catch (error) {
    throw wrapChainError(error);
  }
}

function isNotFound(error: unknown): boolean {
  return (
    error instanceof BaseError &&
    Boolean(
      error.walk(
        (e) => e instanceof TransactionReceiptNotFoundError || e instanceof TransactionNotFoundError,
      ),
    )
  );
}
