import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrate } from '../db/migrate.js';
import { openStore, type Store } from '../db/store.js';
import { providerAccountId } from '../db/tables/ledger.js';
import { sumOfEntries } from '../testing/sum-of-entries.js';
import { Ledger } from './ledger.js';

/** The SQLite ledger writer thread (writer.ts): holds decided in this process, written by the thread. */
describe('ledger writer thread (SQLite)', () => {
  let dir: string;
  let file: string;
  let store: Store;
  let ledger: Ledger;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gm-writer-'));
    file = path.join(dir, 'gpumesh.db');
    store = openStore({ sqlitePath: file });
    await migrate(store.db);
    ledger = new Ledger(store);
  });
  afterAll(async () => {
    await ledger.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('default: a hold is answered before it commits, and reads wait for it', async () => {
    expect(ledger.writer).toBeDefined();
    await ledger.credit({ userId: 'w1', amountNano: 1_000n, ref: 'pay-w1' });
    const hold = await ledger.reserve({ userId: 'w1', amountNano: 300n });
    expect(hold).toMatchObject({ ok: true, balanceNano: 700n });
    expect(ledger.pending).toBeGreaterThan(0); // sent to the thread, not committed yet
    expect(await ledger.balance('w1')).toEqual({ balanceNano: 700n, reservedNano: 300n, spendNano: 0n });
    expect(ledger.pending).toBe(0);
  });

  test('behavior: of 200 concurrent holds, exactly those the balance covers are admitted', async () => {
    await ledger.credit({ userId: 'w2', amountNano: 1_000n, ref: 'pay-w2' });
    const results = await Promise.all(
      Array.from({ length: 200 }, () => ledger.reserve({ userId: 'w2', amountNano: 7n })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(142); // ⌊1000 / 7⌋
    await ledger.idle();
    expect(await ledger.balance('w2')).toEqual({ balanceNano: 6n, reservedNano: 994n, spendNano: 0n });
    expect(await sumOfEntries(store.db, 'w2')).toBe(6n);
  });

  test('behavior: before a 402, the database is asked again (a top-up committed elsewhere counts)', async () => {
    await ledger.credit({ userId: 'w3', amountNano: 100n, ref: 'pay-w3' });
    expect((await ledger.reserve({ userId: 'w3', amountNano: 100n })).ok).toBe(true);
    expect(await ledger.reserve({ userId: 'w3', amountNano: 30n })).toEqual({
      ok: false,
      reason: 'insufficient_credits',
    });
    // Another connection to the same file credits the user: this process never saw that write.
    const other = openStore({ sqlitePath: file });
    await new Ledger(other, { writerThread: false }).credit({
      userId: 'w3',
      amountNano: 50n,
      ref: 'pay-w3-b',
    });
    await other.close();
    expect(await ledger.reserve({ userId: 'w3', amountNano: 30n })).toMatchObject({
      ok: true,
      balanceNano: 20n,
    });
  });

  test('failure: a hold the database refuses moves no money and is reported at settlement', async () => {
    await ledger.credit({ userId: 'w4', amountNano: 100n, ref: 'pay-w4' });
    expect((await ledger.reserve({ userId: 'w4', amountNano: 10n })).ok).toBe(true); // 90 left, here
    // A second process holding the rest behind this one's back (not supported; the guard holds).
    const other = openStore({ sqlitePath: file });
    expect(
      (await new Ledger(other, { writerThread: false }).reserve({ userId: 'w4', amountNano: 90n })).ok,
    ).toBe(true);
    await other.close();
    const admitted = await ledger.reserve({ userId: 'w4', amountNano: 50n });
    if (!admitted.ok) throw new Error('admitted from what this process knew');
    const settled = await ledger.settle({
      reservationId: admitted.reservationId,
      providerNano: 40n,
      feeNano: 2n,
      providerAccountId: providerAccountId('0xdef'),
    });
    expect(settled).toBeNull();
    expect(await ledger.balance('w4')).toEqual({ balanceNano: 0n, reservedNano: 100n, spendNano: 0n });
    expect(await sumOfEntries(store.db, 'w4')).toBe(0n);
    // The refusal carried the database's balance: the next hold is refused here.
    expect((await ledger.reserve({ userId: 'w4', amountNano: 1n })).ok).toBe(false);
  });

  test('failure: when the thread dies, what it held fails and the connection writes again', async () => {
    await ledger.credit({ userId: 'w5', amountNano: 100n, ref: 'pay-w5' });
    const writer = ledger.writer!;
    await ledger.idle();
    const lost = ledger.settle({
      reservationId: 'never-held',
      providerNano: 1n,
      feeNano: 0n,
      providerAccountId: providerAccountId('0xdef'),
    });
    await writer.terminate();
    await expect(lost).rejects.toThrow(/writer thread/);
    expect(ledger.writer).toBeUndefined();
    const hold = await ledger.reserve({ userId: 'w5', amountNano: 60n });
    expect(hold).toMatchObject({ ok: true, balanceNano: 40n }); // committed on this connection
    expect(await ledger.balance('w5')).toEqual({ balanceNano: 40n, reservedNano: 60n, spendNano: 0n });
  });
});
