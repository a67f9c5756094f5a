import { type Hex, type PublicClient, TransactionNotFoundError, TransactionReceiptNotFoundError } from 'viem';

/** What the chain knows of a transaction: mined (and how it went), waiting in the pool, or nothing. */
export type TransactionLookup = 'success' | 'reverted' | 'pending' | 'unknown';

/** Looks a transaction up by hash: its receipt, else whether the pool holds it. RPC errors are thrown. */
export async function lookupTransaction(client: PublicClient, hash: Hex): Promise<TransactionLookup> {
  try {
    const receipt = await client.getTransactionReceipt({ hash });
    return receipt.status === 'success' ? 'success' : 'reverted';
  } catch (error) {
    if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
  }
  try {
    await client.getTransaction({ hash });
    return 'pending';
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return 'unknown';
    throw error;
  }
}
