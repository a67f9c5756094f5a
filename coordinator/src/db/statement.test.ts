import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { expect, test } from 'vitest';
import type { Database } from './schema.js';
import { runStatementsDirectly, Statement } from './statement.js';

const insert = new Statement('insert into t (v) values (?)');
const count = new Statement<{ n: number }>('select count(*) as n from t');

function open(): { db: Kysely<Database>; connection: SQLite.Database; executed: string[] } {
  const connection = new SQLite(':memory:');
  connection.exec('create table t (v integer)');
  const executed: string[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: connection }),
    log: (event) => void executed.push(event.query.sql),
  });
  return { db, connection, executed };
}

test('statements of a transaction run directly go straight to its connection, inside it', async () => {
  const { db, connection, executed } = open();
  await db.transaction().execute(async (trx) => {
    runStatementsDirectly(trx, connection);
    await insert.all(trx, [1]);
    expect(await count.first(trx, [])).toEqual({ n: 1 });
  });
  // Kysely ran the transaction's begin and commit, not the statements.
  expect(executed.some((text) => text.includes('insert'))).toBe(false);
  expect(await count.first(db, [])).toEqual({ n: 1 });

  // They are part of the transaction: a rollback undoes them.
  await expect(
    db.transaction().execute(async (trx) => {
      runStatementsDirectly(trx, connection);
      await insert.all(trx, [2]);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await count.first(db, [])).toEqual({ n: 1 });
  await db.destroy();
});

test('without it, statements go through Kysely', async () => {
  const { db, executed } = open();
  await db.transaction().execute(async (trx) => {
    await insert.all(trx, [1]);
  });
  expect(executed.filter((text) => text.includes('insert'))).toHaveLength(1);
  expect((await sql<{ n: number }>`select count(*) as n from t`.execute(db)).rows[0]!.n).toBe(1);
  await db.destroy();
});
