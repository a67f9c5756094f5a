import type { Address, Hex, LocalAccount, TransactionReceipt } from 'viem';
import { ApiError } from '../errors.js';
import type { ChainContext } from './chain-context.js';
import { CHAIN_ID, GAS_PRICE_WEI } from './constants.js';
import { wrapChainError } from './wrap-chain-error.js';

/** How long to wait for a sent transaction to be mined. */
export const DEFAULT_RECEIPT_TIMEOUT_MS = 30_000;

/** Headroom over the gas estimate for contract calls (percent); plain transfers use the estimate. */
export const CONTRACT_GAS_HEADROOM_PERCENT = 20n;

export type SendTransactionParameters = {
  /** The signer: a proxy wallet, a vault, or the devnet funder. */
  account: LocalAccount;
  /** Recipient; absent for a contract creation. */
  to?: Address;
  value?: bigint;
  data?: Hex;
  /** Gas limit; estimated when absent. */
  gas?: bigint;
  /** Name of the request field the amount came from, for insufficient_funds errors. */
  param?: string;
  /**
   * Runs inside the wallet's queue (and lock) right before signing — a balance check that must not
   * race another send of the same wallet — with the most the transaction can cost in gas
   * (gas limit × gas price, native wei), which the wallet pays on top of any value. Throwing
   * aborts the send.
   */
  precheck?: (check: { feeWei: bigint }) => Promise<void>;
};

export type SentTransaction = { hash: Hex; receipt: TransactionReceipt };

/**
 * Sends a transaction that is not money owed by the service (a stake from the user's own proxy
 * wallet, the devnet's funding); money the service pays goes through the transfer outbox
 * (transfer-outbox.ts), which signs the same way and stores the bytes first. Legacy (type 0), gasPrice 150 gwei,
 * chain id 800000, always — the chain refuses EIP-1559, and a node that would accept it must not
 * get it from us. The nonce comes from the per-wallet signer queue (concurrent sends of one wallet
 * are serialized until broadcast). Waits for the receipt; a reverted transaction is chain_tx_failed.
 * Every viem/RPC error is wrapped into an ApiError.
 */
export async function sendTransaction(
  context: ChainContext,
  { account, to, value = 0n, data, gas, param, precheck }: SendTransactionParameters,
): Promise<SentTransaction> {
  const { client, queue } = context;
  const hash = await queue.run(account.address, async () => {
    try {
      let gasLimit = gas;
      if (gasLimit === undefined) {
        const estimate = await client.estimateGas({
          account: account.address,
          to,
          value,
          data,
          gasPrice: GAS_PRICE_WEI,
        });
        gasLimit = data ? (estimate * (100n + CONTRACT_GAS_HEADROOM_PERCENT)) / 100n : estimate;
      }
      await precheck?.({ feeWei: gasLimit * GAS_PRICE_WEI });
      // The nonce is taken after the checks, under the wallet's lock, so no replica takes it too.
      const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
      const serializedTransaction = await account.signTransaction({
        type: 'legacy',
        chainId: CHAIN_ID,
        nonce,
        gas: gasLimit,
        gasPrice: GAS_PRICE_WEI,
        to: to ?? null,
        value,
        data,
      });
      return await client.sendRawTransaction({ serializedTransaction });
    } catch (error) {
      throw wrapChainError(error, param);
    }
  });
  let receipt: TransactionReceipt;
  try {
    receipt = await client.waitForTransactionReceipt({ hash, timeout: DEFAULT_RECEIPT_TIMEOUT_MS });
  } catch (error) {
    throw wrapChainError(error);
  }
  if (receipt.status !== 'success') {
    throw new ApiError('chain_tx_failed', `Transaction ${hash} failed on chain.`);
  }
  return { hash, receipt };
}
