import type { Kysely } from 'kysely';
import { type Address, getAddress, type Hash, parseAbi } from 'viem';
import type { PaymentSource, StableSymbol } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { verifyPayment } from '../chain/verify-payment.js';
import { wrapChainError } from '../chain/wrap-chain-error.js';
import type { Clock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { creditDeposit } from './credit-deposit.js';
import { depositAmount } from './deposit-amount.js';
import { pricePayment } from './price-payment.js';

/** The cursor row of the deposit watcher. */
export const DEPOSIT_CURSOR = 'deposits';

/** Most blocks one pass reads (a watcher that fell behind catches up over several passes). */
export const DEPOSIT_BLOCKS_PER_PASS = 200;

const TRANSFER_EVENT = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);

/**
 * One pass of the deposit watcher: reads the confirmed blocks after its cursor, finds native
 * transfers and stable Transfer logs whose recipient is a proxy wallet, and credits each through the
 * same path as POST /api/user/topup (only value from outside the service's wallets, only while
 * its tokens are still there) (verified on chain, once per transaction hash — a later top-up
 * call for it returns the same result). The first pass starts at the current head. Returns how
 * many payments to proxy wallets it found credited.
 */
export async function watchDeposits({
  db,
  services,
  clock,
}: {
  db: Kysely<Database>;
  services: ChainServices;
  clock: Clock;
}): Promise<number> {
  const { client } = services.context;
  let head: bigint;
  try {
    head = await client.getBlockNumber();
  } catch (error) {
    throw wrapChainError(error);
  }
  const confirmed = head - BigInt(Math.max(services.confirmations, 1)) + 1n;
  const cursorRow = await db
    .selectFrom('chain_cursors')
    .select('block')
    .where('name', '=', DEPOSIT_CURSOR)
    .executeTakeFirst();
  if (!cursorRow) {
    await db
      .insertInto('chain_cursors')
      .values({ name: DEPOSIT_CURSOR, block: confirmed })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return 0;
  }
  const from = toBigInt(cursorRow.block) + 1n;
  if (from > confirmed) return 0;
  const to =
    from + BigInt(DEPOSIT_BLOCKS_PER_PASS) - 1n < confirmed
      ? from + BigInt(DEPOSIT_BLOCKS_PER_PASS) - 1n
      : confirmed;

  const candidates = new Map<Hash, { source: PaymentSource; recipient: Address }>();
  const symbols = new Map<string, StableSymbol>(
    Object.entries(services.tokens).map(([symbol, address]) => [
      address.toLowerCase(),
      symbol as StableSymbol,
    ]),
  );
  try {
    const [blocks, logs] = await Promise.all([
      Promise.all(
        Array.from({ length: Number(to - from) + 1 }, (_, i) =>
          client.getBlock({ blockNumber: from + BigInt(i), includeTransactions: true }),
        ),
      ),
      symbols.size > 0
        ? client.getLogs({
            address: [...symbols.keys()] as Address[],
            event: TRANSFER_EVENT[0],
            fromBlock: from,
            toBlock: to,
          })
        : Promise.resolve([]),
    ]);
    for (const block of blocks) {
      for (const tx of block.transactions) {
        if (tx.to && tx.value > 0n)
          candidates.set(tx.hash, { source: 'native', recipient: getAddress(tx.to) });
      }
    }
    for (const log of logs) {
      const symbol = symbols.get(log.address.toLowerCase());
      if (symbol && log.args.to && log.transactionHash && !candidates.has(log.transactionHash)) {
        candidates.set(log.transactionHash, { source: symbol, recipient: getAddress(log.args.to) });
      }
    }
  } catch (error) {
    throw wrapChainError(error);
  }

  let credited = 0;
  const recipients = [...new Set([...candidates.values()].map((c) => c.recipient))];
  const owners =
    recipients.length === 0
      ? []
      : await db
          .selectFrom('wallets')
          .select(['user_id', 'proxy_address'])
          .where('proxy_address', 'in', recipients)
          .execute();
  const ownerOf = new Map(owners.map((o) => [getAddress(o.proxy_address), o.user_id]));
  for (const [hash, { source, recipient }] of candidates) {
    const userId = ownerOf.get(recipient);
    if (!userId) continue;
    try {
      const verified = await verifyPayment(services.context, {
        hash,
        source,
        recipient,
        tokens: services.tokens,
        confirmations: 1,
      });
      if (verified.status !== 'confirmed') continue;
      const amount = await depositAmount({ db, services }, verified.transfers);
      const creditedNano = pricePayment(source, amount, services.nativeUsdPriceNano);
      if (creditedNano === 0n) continue;
      const result = await creditDeposit(
        { db, services, clock },
        {
          userId,
          proxyAddress: recipient,
          paymentId: hash.toLowerCase(),
          source,
          amount,
          creditedNano,
          blockNumber: verified.blockNumber,
        },
      );
      if (result.status === 'credited') credited++;
    } catch (error) {
      // A refused payment (failed, someone else's paymentId…) is skipped; chain trouble stops the
      // pass before the cursor moves, so the blocks are read again next time.
      if (!(error instanceof ApiError) || error.code === 'chain_unavailable') throw error;
    }
  }
  await db.updateTable('chain_cursors').set({ block: to }).where('name', '=', DEPOSIT_CURSOR).execute();
  return credited;
}
