/**
 * The ledger writer thread (see writer.ts): its own connection to the SQLite file, the ledger's
 * operations group-committed as on any connection (batch.ts), answers posted back in the order the
 * operations ran, each with the account's spendable balance after it. A hold whose id the ledger
 * generated is kept in this thread's memory and written with its settlement (unwritten-holds.ts);
 * the balances it answers are the database's less those holds.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Kysely, SqliteDialect } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { SqliteConnection } from '../db/sqlite-connection.js';
import { Statement } from '../db/statement.js';
import type { Tx } from '../db/tx.js';
import { LedgerBatcher } from './batch.js';
import { releaseIn } from './release.js';
import { reserveIn } from './reserve.js';
import { settleIn, settleUnwrittenIn } from './settle.js';
import type { Hold, ReserveResult } from './types.js';
import { UnwrittenHolds } from './unwritten-holds.js';
import type { Balance, WriterMessage, WriterOp, WriterReply } from './writer.js';

/**
 * Log pages after which this connection checkpoints by itself: only if the background checkpointer
 * (db/store.ts) stopped; it keeps the log far below this.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 100_000;

const connection = new SqliteConnection((workerData as { file: string }).file);
connection.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
const batcher = new LedgerBatcher(db, connection);
const port = parentPort!;

const selectAccount = new Statement<{
  balance: string | number | bigint;
  reserved: string | number | bigint;
  spend: string | number | bigint;
}>('select balance, reserved, spend from ledger_accounts where account_id = ?');
const unwritten = new UnwrittenHolds();

/** The account as the database has it, less the holds kept here (within `tx`, so in order). */
async function accountIn(tx: Tx, accountId: string): Promise<Balance> {
  const row = await selectAccount.first(tx, [accountId]);
  const held = unwritten.heldBy(accountId);
  return {
    balanceNano: (row ? toBigInt(row.balance) : 0n) - held,
    reservedNano: (row ? toBigInt(row.reserved) : 0n) + held,
    spendNano: row ? toBigInt(row.spend) : 0n,
  };
}

function run(op: WriterOp): Promise<Omit<WriterReply, 'id'>> {
  return batcher.run(async (tx) => {
    switch (op.op) {
      case 'reserve': {
        const { hold } = op;
        if (op.keep) {
          const { balanceNano } = await accountIn(tx, hold.userId);
          if (balanceNano < hold.amountNano) {
            return { value: REFUSED, account: { id: hold.userId, balanceNano } };
          }
          unwritten.add(tx, hold);
          const after = balanceNano - hold.amountNano;
          const value: ReserveResult = { ok: true, ...held(hold), balanceNano: after };
          return { value, account: { id: hold.userId, balanceNano: after } };
        }
        const result = await reserveIn(tx, hold);
        const balanceNano = result.ok
          ? result.balanceNano - unwritten.heldBy(hold.userId)
          : (await accountIn(tx, hold.userId)).balanceNano;
        return { value: result, account: { id: hold.userId, balanceNano } };
      }
      case 'settle': {
        const kept = unwritten.take(tx, op.settlement.reservationId);
        const outcome = kept
          ? await settleUnwrittenIn(tx, kept, op.settlement)
          : await settleIn(tx, op.settlement);
        if (!outcome) return { value: null };
        const balanceNano = outcome.balanceNano - unwritten.heldBy(outcome.accountId);
        return { value: { ...outcome, balanceNano }, account: { id: outcome.accountId, balanceNano } };
      }
      case 'release': {
        const kept = unwritten.take(tx, op.reservationId);
        const released = kept
          ? { accountId: kept.userId, balanceNano: (await accountIn(tx, kept.userId)).balanceNano }
          : await releaseIn(tx, op.reservationId, op.now);
        if (!released) return { value: false };
        const balanceNano = kept
          ? released.balanceNano
          : released.balanceNano - unwritten.heldBy(released.accountId);
        return { value: true, account: { id: released.accountId, balanceNano } };
      }
      case 'sweep':
        return { value: unwritten.forgetOlderThan(op.before) };
      case 'balance': {
        const account = await accountIn(tx, op.accountId);
        return { value: account, account: { id: op.accountId, balanceNano: account.balanceNano } };
      }
    }
  });
}

const REFUSED: ReserveResult = { ok: false, reason: 'insufficient_credits' };

function held(hold: Hold): { reservationId: string; amountNano: bigint } {
  return { reservationId: hold.reservationId, amountNano: hold.amountNano };
}

let replies: WriterReply[] = [];
function answer(reply: WriterReply): void {
  // Answers of one commit resolve together: they leave in one message, after it.
  if (replies.length === 0) setImmediate(post);
  replies.push(reply);
}
function post(): void {
  if (replies.length === 0) return;
  // In the order the operations ran (their ids), whatever order their promises settled in.
  const message: WriterMessage = {
    replies: replies.sort((a, b) => a.id - b.id),
    stats: { ...batcher.stats },
  };
  replies = [];
  port.postMessage(message);
}

port.on('message', (message: WriterOp[] | 'close') => {
  if (message === 'close') {
    // Holds still kept, once every operation sent ran, are written as ordinary holds: their
    // requests may still settle, on the store's own connection once this thread is gone.
    void batcher
      .idle()
      .then(() => Promise.all(unwritten.drain().map((hold) => batcher.run((tx) => reserveIn(tx, hold)))))
      .then(() => db.destroy())
      .finally(() => {
        post();
        port.close();
      });
    return;
  }
  for (const op of message) {
    run(op).then(
      (reply) => answer({ id: op.id, ...reply }),
      (error: unknown) =>
        answer({
          id: op.id,
          error: {
            name: error instanceof Error ? error.name : 'Error',
            message: error instanceof Error ? error.message : String(error),
          },
        }),
    );
  }
});
