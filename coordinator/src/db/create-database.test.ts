import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { expect, test } from 'vitest';
import { createDatabase, SQLITE_PAGE_SIZE } from './create-database.js';
import { migrate } from './migrate.js';

test('SQLite: a new database has small pages and a write-ahead log', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-db-'));
  const db = createDatabase({ sqlitePath: path.join(dir, 'gpumesh.db') });
  try {
    await migrate(db);
    const { rows: page } = await sql<{ page_size: number }>`pragma page_size`.execute(db);
    const { rows: journal } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
    expect(page[0]!.page_size).toBe(SQLITE_PAGE_SIZE);
    expect(journal[0]!.journal_mode).toBe('wal');
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});
