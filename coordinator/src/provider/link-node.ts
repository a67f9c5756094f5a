/**
 * Linking a node to its owner wallet: the link is recorded (node_owners), and the earnings the node
 * made before — credited to its own provider account, `provider:<nodeId>` — move to the owner's,
 * `provider:<owner>`, in one ledger transaction (two entries, the sum unchanged). Idempotent: a
 * repeat finds nothing left to move. Settlements after the link credit the owner directly.
 */

import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import type { Store } from '../db/store.js';
import { applyEntry } from '../ledger/apply-entry.js';
import { ENTRY_KINDS, providerAccountId } from '../ledger/tables.js';

export type LinkResult = { owner: string; movedNano: bigint };

export async function linkNode(
  store: Store,
  params: { nodeId: string; owner: string; now: number },
): Promise<LinkResult> {
  const nodeId = params.nodeId.toLowerCase();
  const owner = params.owner.toLowerCase();
  await store.db
    .insertInto('node_owners')
    .values({ node_id: nodeId, owner, linked_at: params.now })
    .onConflict((oc) => oc.column('node_id').doUpdateSet({ owner, linked_at: params.now }))
    .execute();
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
        if (!out || out.balanceAfter !== 0n) throw new RetryMove();
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

/** The owner a node was linked to, if any (lowercase). */
export async function ownerOfNode(store: Store, nodeId: string): Promise<string | undefined> {
  const row = await store.db
    .selectFrom('node_owners')
    .select('owner')
    .where('node_id', '=', nodeId.toLowerCase())
    .executeTakeFirst();
  return row?.owner;
}
