import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { expect, test } from 'vitest';
import { migrate } from './migrate.js';
import { openStore, SQLITE_PAGE_SIZE } from './store.js';

test('SQLite: a new database has small pages and a write-ahead log', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-db-'));
  const store = openStore({ sqlitePath: path.join(dir, 'gpumesh.db') });
  const { db } = store;
  try {
    await migrate(db);
    const { rows: page } = await sql<{ page_size: number }>`pragma page_size`.execute(db);
    const { rows: journal } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
    expect(page[0]!.page_size).toBe(SQLITE_PAGE_SIZE);
    expect(journal[0]!.journal_mode).toBe('wal');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
