import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, expect, test } from 'vitest';
import { SqliteConnection } from './sqlite-connection.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test('error: another connection committing between a transaction’s read and its write does not fail it (was SQLITE_BUSY_SNAPSHOT, a 500)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumesh-sqlite-'));
  dirs.push(dir);
  const file = path.join(dir, 'db.sqlite');
  const connection = new SqliteConnection(file);
  connection.raw.exec('create table t (v integer)');
  const db = new Kysely<{ t: { v: number } }>({ dialect: new SqliteDialect({ database: connection }) });
  // The other writer, as the ledger writer's thread is: its own connection to the same file. No
  // busy wait here (one thread): when the transaction holds the write lock, it is told so at once.
  const other = new SQLite(file);
  other.pragma('busy_timeout = 0');
  let otherWrite: string | undefined;
  try {
    await db.transaction().execute(async (trx) => {
      await sql`select count(*) as n from t`.execute(trx);
      try {
        other.prepare('insert into t (v) values (1)').run();
        otherWrite = 'committed';
      } catch (error) {
        otherWrite = (error as { code?: string }).code;
      }
      await sql`insert into t (v) values (2)`.execute(trx);
    });
    // The transaction held the write lock from its begin: the other writer waits its turn (a real
    // one, with busy_timeout, would), and nothing fails.
    expect(otherWrite).toBe('SQLITE_BUSY');
    expect(other.prepare('select v from t').all()).toEqual([{ v: 2 }]);
  } finally {
    other.close();
    await db.destroy();
  }
});
