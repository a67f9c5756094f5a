import type { Kysely } from 'kysely';
import { type Address, erc20Abi } from 'viem';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { PaymentSource } from './constants.js';
import type { ChainServices } from './create-chain-services.js';
import { inFlightAmount } from './in-flight-amount.js';
import { wrapChainError } from './wrap-chain-error.js';

export type SpendableBalanceParameters = {
  userId: string;
  proxyAddress: Address;
  token: PaymentSource;
  /**
   * Inside the transfer outbox's check of transfer `inFlightExcept`: the latest balance less what the
   * wallet's other stored, unsettled transfers take (inFlightAmount) — bytes stored but not yet
   * broadcast are in neither the latest nor the pending state.
   */
  inFlightExcept?: string;
};

/**
 * What the proxy wallet holds of `token` that no credit stands on (smallest unit): its on-chain
 * balance minus every top-up credited (or being credited) from it. Credited tokens back the
 * user's credits and stay in the wallet, so this is all a withdrawal or a stake may spend and all
 * a new top-up may still credit. The balance is the lower of the latest block's and the pending
 * state's: a send of this wallet broadcast but not mined is already gone, and a transfer in that
 * is not mined yet is not there. Call it inside the wallet's signer queue (it holds the wallet's
 * lock), or a concurrent send or credit makes the answer stale.
 */
export async function spendableBalance(
  db: Kysely<Database>,
  services: ChainServices,
  { userId, proxyAddress, token, inFlightExcept }: SpendableBalanceParameters,
): Promise<bigint> {
  const { client } = services.context;
  const read = (at: { blockTag: 'latest' | 'pending' } | { blockNumber: bigint }): Promise<bigint> => {
    if (token === 'native') return client.getBalance({ address: proxyAddress, ...at });
    const address = services.tokens[token];
    if (!address)
      throw new ApiError('invalid_request', `${token} is not configured here.`, { param: 'token' });
    return client.readContract({
      address,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [proxyAddress],
      ...at,
    });
  };
  let onChain: bigint;
  try {
    if (inFlightExcept !== undefined) {
      // The balance and the nonce at one block: a transfer mined in it whose row still says
      // broadcast is in the balance already, and counted once (in-flight-amount.ts).
      const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
      const [balance, minedNonce] = await Promise.all([
        read({ blockNumber }),
        client.getTransactionCount({ address: proxyAddress, blockNumber }),
      ]);
      const asset = token === 'native' ? 'native' : services.tokens[token]!;
      const out = await inFlightAmount(db, {
        from: proxyAddress,
        asset,
        except: inFlightExcept,
        minedNonce: BigInt(minedNonce),
      });
      onChain = balance - out;
    } else {
      const [latest, pending] = await Promise.all([
        read({ blockTag: 'latest' }),
        read({ blockTag: 'pending' }),
      ]);
      // biome-ignore lint/complexity/useMathMinMax: bigint (Math.min takes numbers)
      onChain = latest < pending ? latest : pending;
    }
  } catch (error) {
    throw wrapChainError(error);
  }
  const locked = await creditedAmount(db, userId, token);
  return onChain > locked ? onChain - locked : 0n;
}

/** The sum of a user's top-ups of `token` (smallest unit): the tokens that back credits. */
async function creditedAmount(db: Kysely<Database>, userId: string, token: PaymentSource): Promise<bigint> {
  const rows = await db
    .selectFrom('topups')
    .select('amount')
    .where('user_id', '=', userId)
    .where('source', '=', token)
    .execute();
  return rows.reduce((sum, row) => sum + BigInt(row.amount), 0n);
}
