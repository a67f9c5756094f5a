import { Kysely, SqliteDialect, sql } from 'kysely';
import { expect, test } from 'vitest';
import type { Database } from './schema.js';
import { SqliteConnection } from './sqlite-connection.js';
import { Statement } from './statement.js';
import { Tx } from './tx.js';

const insert = new Statement('insert into t (v) values (?)');
const count = new Statement<{ n: number }>('select count(*) as n from t');

function open(): { db: Kysely<Database>; connection: SqliteConnection; executed: string[] } {
  const connection = new SqliteConnection(':memory:');
  connection.raw.exec('create table t (v integer)');
  const executed: string[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: connection }),
    log: (event) => void executed.push(event.query.sql),
  });
  return { db, connection, executed };
}

test('statements of a Tx with its connection go straight to the connection, inside the transaction', async () => {
  const { db, connection, executed } = open();
  await db.transaction().execute(async (trx) => {
    const tx = new Tx(trx, connection);
    await insert.all(tx, [1]);
    expect(await count.first(tx, [])).toEqual({ n: 1 });
  });
  // Kysely ran the transaction's begin and commit, not the statements.
  expect(executed.some((text) => text.includes('insert'))).toBe(false);
  expect(await count.first(db, [])).toEqual({ n: 1 });

  // They are part of the transaction: a rollback undoes them.
  await expect(
    db.transaction().execute(async (trx) => {
      await insert.all(new Tx(trx, connection), [2]);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await count.first(db, [])).toEqual({ n: 1 });
  await db.destroy();
});

test('without a connection, statements go through Kysely', async () => {
  const { db, executed } = open();
  await db.transaction().execute(async (trx) => {
    await insert.all(trx, [1]);
    await insert.all(new Tx(trx), [2]);
  });
  expect(executed.filter((text) => text.includes('insert'))).toHaveLength(2);
  expect((await sql<{ n: number }>`select count(*) as n from t`.execute(db)).rows[0]!.n).toBe(2);
  await db.destroy();
});
