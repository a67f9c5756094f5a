import type { Kysely } from 'kysely';
import { type Address, erc20Abi } from 'viem';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { PaymentSource } from './constants.js';
import type { ChainServices } from './create-chain-services.js';
import { wrapChainError } from './wrap-chain-error.js';

export type SpendableBalanceParameters = { userId: string; proxyAddress: Address; token: PaymentSource };

/**
 * What the proxy wallet may spend of `token` (smallest unit): its on-chain balance minus what it
 * received as credited top-ups. Those tokens back the user's credits, so staking or withdrawing
 * them would spend the same money twice; they stay in the wallet. Reads the pending state, so a
 * send of the same wallet that is broadcast but not yet mined is already deducted.
 */
export async function spendableBalance(
  db: Kysely<Database>,
  services: ChainServices,
  { userId, proxyAddress, token }: SpendableBalanceParameters,
): Promise<bigint> {
  let onChain: bigint;
  try {
    if (token === 'native') {
      onChain = await services.context.client.getBalance({ address: proxyAddress, blockTag: 'pending' });
    } else {
      const address = services.tokens[token];
      if (!address)
        throw new ApiError('invalid_request', `${token} is not configured here.`, { param: 'token' });
      onChain = await services.context.client.readContract({
        address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [proxyAddress],
        blockTag: 'pending',
      });
    }
  } catch (error) {
    throw wrapChainError(error);
  }
  const rows = await db
    .selectFrom('topups')
    .select('amount')
    .where('user_id', '=', userId)
    .where('source', '=', token)
    .execute();
  const locked = rows.reduce((sum, row) => sum + BigInt(row.amount), 0n);
  return onChain > locked ? onChain - locked : 0n;
}
