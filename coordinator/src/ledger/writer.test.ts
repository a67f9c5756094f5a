import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrate } from '../db/migrate.js';
import { openStore, type Store } from '../db/store.js';
import { providerAccountId } from '../db/tables/ledger.js';
import { storedBalance, sumOfEntries } from '../testing/sum-of-entries.js';
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
    // The holds are kept in the thread, unwritten until their settlements: the books show none.
    expect(await storedBalance(store.db, 'w2')).toBe(1_000n);
    expect(await sumOfEntries(store.db, 'w2')).toBe(1_000n);
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
    // The thread has placed it (else it could run after the other process's hold and see that).
    await ledger.idle();
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
    expect(await sumOfEntries(store.db, 'w4')).toBe(await storedBalance(store.db, 'w4'));
    // The refusal carried the database's balance: the next hold is refused here.
    expect((await ledger.reserve({ userId: 'w4', amountNano: 1n })).ok).toBe(false);
  });

  test('behavior: a hold is written with its settlement — its entries, in one transaction', async () => {
    await ledger.credit({ userId: 'w6', amountNano: 1_000n, ref: 'pay-w6' });
    const hold = await ledger.reserve({ userId: 'w6', amountNano: 300n });
    if (!hold.ok) throw new Error('covered');
    await ledger.idle();
    const rows = () =>
      store.db
        .selectFrom('ledger_reservations')
        .select('status')
        .where('id', '=', hold.reservationId)
        .execute();
    expect(await rows()).toEqual([]); // kept in the thread, not written
    const outcome = await ledger.settle({
      reservationId: hold.reservationId,
      providerNano: 100n,
      feeNano: 5n,
      providerAccountId: providerAccountId('0xabc'),
    });
    expect(outcome).toMatchObject({ chargedNano: 105n, releasedNano: 195n, balanceNano: 895n });
    expect(await rows()).toEqual([]); // the entries name it
    const entries = await store.db
      .selectFrom('ledger_entries')
      .select(['kind', 'amount', 'balance_after'])
      .where('ref', '=', hold.reservationId)
      .orderBy('kind') // not by id: two ids made in the same millisecond order by their random bits
      .execute();
    expect(entries.map((e) => [e.kind, BigInt(e.amount), BigInt(e.balance_after)])).toEqual([
      ['reserve', -300n, 700n],
      ['settle', 195n, 895n],
    ]);
    expect(await ledger.balance('w6')).toEqual({ balanceNano: 895n, reservedNano: 0n, spendNano: 105n });
    expect(await sumOfEntries(store.db, 'w6')).toBe(895n);
    // Settled once: a second settlement or a release changes nothing.
    const again = {
      reservationId: hold.reservationId,
      providerNano: 1n,
      feeNano: 0n,
      providerAccountId: 'p',
    };
    expect(await ledger.settle(again)).toBeNull();
    expect(await ledger.release(hold.reservationId)).toBe(false);
  });

  test('behavior: a hold released before it was written leaves no row at all', async () => {
    await ledger.credit({ userId: 'w7', amountNano: 100n, ref: 'pay-w7' });
    const hold = await ledger.reserve({ userId: 'w7', amountNano: 100n });
    if (!hold.ok) throw new Error('covered');
    expect((await ledger.reserve({ userId: 'w7', amountNano: 1n })).ok).toBe(false);
    expect(await ledger.release(hold.reservationId)).toBe(true);
    expect(await ledger.balance('w7')).toEqual({ balanceNano: 100n, reservedNano: 0n, spendNano: 0n });
    const entries = await store.db
      .selectFrom('ledger_entries')
      .select('kind')
      .where('account_id', '=', 'w7')
      .execute();
    expect(entries).toEqual([{ kind: 'topup' }]);
    expect((await ledger.reserve({ userId: 'w7', amountNano: 100n })).ok).toBe(true);
  });

  test('behavior: at close, the holds kept are written, so their requests can still settle', async () => {
    const closing = openStore({ sqlitePath: file });
    const first = new Ledger(closing);
    await first.credit({ userId: 'w8', amountNano: 500n, ref: 'pay-w8' });
    const hold = await first.reserve({ userId: 'w8', amountNano: 200n });
    if (!hold.ok) throw new Error('covered');
    await first.close();
    const after = new Ledger(closing, { writerThread: false });
    expect(await after.balance('w8')).toEqual({ balanceNano: 300n, reservedNano: 200n, spendNano: 0n });
    const outcome = await after.settle({
      reservationId: hold.reservationId,
      providerNano: 50n,
      feeNano: 0n,
      providerAccountId: providerAccountId('0xabc'),
    });
    expect(outcome).toMatchObject({ chargedNano: 50n, balanceNano: 450n });
    expect(await sumOfEntries(closing.db, 'w8')).toBe(450n);
    await closing.close();
  });

  test('failure: when the thread dies, what it held fails and the connection writes again', async () => {
    await ledger.credit({ userId: 'w5', amountNano: 100n, ref: 'pay-w5' });
    const writer = ledger.writer!;
    await ledger.idle();
    const kept = await ledger.reserve({ userId: 'w5', amountNano: 30n });
    if (!kept.ok) throw new Error('covered');
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
    // A hold the thread kept died with it (as at a crash): released whole, nothing to settle.
    expect(await ledger.balance('w5')).toEqual({ balanceNano: 100n, reservedNano: 0n, spendNano: 0n });
    const late = { reservationId: kept.reservationId, providerNano: 1n, feeNano: 0n, providerAccountId: 'p' };
    expect(await ledger.settle(late)).toBeNull();
    const hold = await ledger.reserve({ userId: 'w5', amountNano: 60n });
    expect(hold).toMatchObject({ ok: true, balanceNano: 40n }); // committed on this connection
    expect(await ledger.balance('w5')).toEqual({ balanceNano: 40n, reservedNano: 60n, spendNano: 0n });
  });
});
