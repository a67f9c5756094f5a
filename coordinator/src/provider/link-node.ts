/**
 * Linking a node to its owner wallet: the link is recorded (node_owners), and the earnings the node
 * made before — credited to its own provider account, `provider:<nodeId>` — move to the owner's,
 * `provider:<owner>`, in one ledger transaction (two entries, the sum unchanged). Idempotent: a
 * repeat finds nothing left to move. Settlements after the link credit the owner directly. A
 * suspended node is refused (`node_suspended`): its earnings stay where the suspension found them.
 */

import type { Kysely } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import { lockInTransaction } from '../db/lock-in-transaction.js';
import type { Database } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { ENTRY_KINDS, providerAccountId } from '../db/tables/ledger.js';
import { ApiError } from '../errors.js';
import { applyEntry } from '../ledger/apply-entry.js';
import { suspensionOf } from '../trust/standing/standings.js';

export type LinkResult = { owner: string; movedNano: bigint };

export async function linkNode(
  store: Store,
  params: { nodeId: string; owner: string; now: number },
): Promise<LinkResult> {
  const nodeId = params.nodeId.toLowerCase();
  const owner = params.owner.toLowerCase();
  await store.db.transaction().execute(async (trx) => {
    // Not while it is being convicted (trust/slashing/convict.ts takes the same lock): either the conviction
    // finds the link and takes from the owner's account, or the link finds the node suspended.
    await lockInTransaction(trx, `node:${nodeId}`);
    await trx
      .insertInto('node_owners')
      .values({ node_id: nodeId, owner, linked_at: params.now })
      .onConflict((oc) => oc.column('node_id').doUpdateSet({ owner, linked_at: params.now }))
      .execute();
    await refuseSuspended(trx, nodeId); // after a write: on SQLite the transaction holds the database
  });
  const movedNano = await moveEarnings(store, nodeId, owner, params.now);
  return { owner, movedNano };
}

/** Moves the node account's whole balance to the owner's; 0n when there is none. */
async function moveEarnings(store: Store, nodeId: string, owner: string, now: number): Promise<bigint> {
  const from = providerAccountId(nodeId);
  const to = providerAccountId(owner);
  if (from === to) return 0n;
  // A settlement may credit the node account meanwhile: the guarded debit then fails; read again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const moved = await store.db
      .transaction()
      .execute(async (trx) => {
        // Suspended since the link was recorded (a conviction in between took what was here): held.
        await lockInTransaction(trx, `node:${nodeId}`);
        if (await isSuspended(trx, nodeId)) return 0n;
        const row = await trx
          .selectFrom('ledger_accounts')
          .select('balance')
          .where('account_id', '=', from)
          .executeTakeFirst();
        const balance = row ? toBigInt(row.balance) : 0n;
        if (balance <= 0n) return 0n;
        const id = newId(now);
        const kind = ENTRY_KINDS.earningsTransfer;
        const out = await applyEntry(trx, {
          accountId: from,
          kind,
          amount: -balance,
          ref: `${id}:from`,
          now,
        });
        if (out?.balanceAfter !== 0n) throw new RetryMove();
        await applyEntry(trx, { accountId: to, kind, amount: balance, ref: `${id}:to`, now });
        return balance;
      })
      .catch((error: unknown) => {
        if (error instanceof RetryMove) return undefined;
        throw error;
      });
    if (moved !== undefined) return moved;
  }
  throw new Error(`moving the earnings of ${nodeId} kept racing settlements`);
}

class RetryMove extends Error {}

async function isSuspended(trx: Kysely<Database>, nodeId: string): Promise<boolean> {
  return (await suspensionOf(trx, nodeId)) !== undefined;
}

/** A suspended node's earnings are held (forfeited, if it was convicted): it is not linked. */
async function refuseSuspended(trx: Kysely<Database>, nodeId: string): Promise<void> {
  if (await isSuspended(trx, nodeId)) {
    throw new ApiError(
      'node_suspended',
      'This node is suspended: it cannot be linked until an operator reinstates it.',
      {
        param: 'nodeId',
      },
    );
  }
}

/** The owner a node was linked to, if any (lowercase). */
export async function ownerOfNode(store: Store, nodeId: string): Promise<string | undefined> {
  const row = await store.db
    .selectFrom('node_owners')
    .select('owner')
    .where('node_id', '=', nodeId.toLowerCase())
    .executeTakeFirst();
  return row?.owner;
}
