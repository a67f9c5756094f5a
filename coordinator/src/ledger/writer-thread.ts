/**
 * The ledger writer thread (see writer.ts): its own connection to the SQLite file, the ledger's
 * operations group-committed as on any connection (batch.ts), answers posted back in the order the
 * operations ran, each with the account's balance after it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Kysely, SqliteDialect } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { SqliteConnection } from '../db/sqlite-connection.js';
import { Statement } from '../db/statement.js';
import { LedgerBatcher } from './batch.js';
import { releaseIn } from './release.js';
import { reserveIn } from './reserve.js';
import { settleIn } from './settle.js';
import type { WriterMessage, WriterOp, WriterReply } from './writer.js';

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

const selectBalance = new Statement<{ balance: string | number | bigint }>(
  'select balance from ledger_accounts where account_id = ?',
);

function run(op: WriterOp): Promise<Omit<WriterReply, 'id'>> {
  return batcher.run(async (tx) => {
    switch (op.op) {
      case 'reserve': {
        const result = await reserveIn(tx, op.hold);
        const row = result.ok ? undefined : await selectBalance.first(tx, [op.hold.userId]);
        const balanceNano = result.ok ? result.balanceNano : row ? toBigInt(row.balance) : 0n;
        return { value: result, account: { id: op.hold.userId, balanceNano } };
      }
      case 'settle': {
        const outcome = await settleIn(tx, op.settlement);
        return {
          value: outcome,
          ...(outcome ? { account: { id: outcome.accountId, balanceNano: outcome.balanceNano } } : {}),
        };
      }
      case 'release': {
        const released = await releaseIn(tx, op.reservationId, op.now);
        return {
          value: released !== null,
          ...(released ? { account: { id: released.accountId, balanceNano: released.balanceNano } } : {}),
        };
      }
      case 'balance': {
        const row = await selectBalance.first(tx, [op.accountId]);
        return { account: { id: op.accountId, balanceNano: row ? toBigInt(row.balance) : 0n } };
      }
    }
  });
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
    void batcher
      .idle()
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
