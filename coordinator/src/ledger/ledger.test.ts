import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { PLATFORM_ACCOUNT_ID, providerAccountId } from '../db/tables/ledger.js';
import { storedBalance, sumOfEntries } from '../testing/sum-of-entries.js';
import { testBackends } from '../testing/test-backends.js';
import { createTestClock } from '../testing/test-clock.js';
import { Ledger } from './ledger.js';

describe.each(testBackends())('ledger on $name', ({ skip, open }) => {
  let db: Kysely<Database>;
  let ledger: Ledger;
  let close: () => Promise<void>;
  const clock = createTestClock();
  beforeAll(async () => {
    if (skip) return;
    const opened = await open('ledger');
    ({ db, close } = opened);
    ledger = new Ledger(opened.store, { clock });
  });
  afterAll(async () => {
    if (skip) return;
    await ledger.close();
    await close();
  });

  test.skipIf(skip)('default: credit, reserve, settle, release move money exactly', async () => {
    const r0 = await ledger.credit({ userId: 'u1', amountNano: 1_000_000n, ref: 'pay-1' });
    expect(r0).toMatchObject({ credited: true, balanceNano: 1_000_000n });
    const hold = await ledger.reserve({ userId: 'u1', amountNano: 300_000n });
    expect(hold).toMatchObject({ ok: true, balanceNano: 700_000n });
    if (!hold.ok) throw new Error('unreachable');
    expect(await ledger.balance('u1')).toEqual({
      balanceNano: 700_000n,
      reservedNano: 300_000n,
      spendNano: 0n,
    });
    const outcome = await ledger.settle({
      reservationId: hold.reservationId,
      providerNano: 100_000n,
      feeNano: 5_000n,
      providerAccountId: providerAccountId('0xAbC'),
    });
    expect(outcome).toEqual({
      accountId: 'u1',
      chargedNano: 105_000n,
      providerNano: 100_000n,
      feeNano: 5_000n,
      releasedNano: 195_000n,
      balanceNano: 895_000n,
    });
    expect(await ledger.balance('u1')).toEqual({
      balanceNano: 895_000n,
      reservedNano: 0n,
      spendNano: 105_000n,
    });
    expect((await ledger.balance('provider:0xabc')).balanceNano).toBe(100_000n);
    expect((await ledger.balance(PLATFORM_ACCOUNT_ID)).balanceNano).toBeGreaterThanOrEqual(5_000n);
    // The user's log: the hold out, then back less the charge, in one entry.
    const log = await db
      .selectFrom('ledger_entries')
      .select(['kind', 'amount', 'balance_after'])
      .where('ref', '=', hold.reservationId)
      .orderBy('kind')
      .execute();
    expect(log.map((e) => [e.kind, toBigInt(e.amount), toBigInt(e.balance_after)])).toEqual([
      ['reserve', -300_000n, 700_000n],
      ['settle', 195_000n, 895_000n],
    ]);
    // settle and release are once-only
    expect(
      await ledger.settle({
        reservationId: hold.reservationId,
        providerNano: 1n,
        feeNano: 0n,
        providerAccountId: 'x',
      }),
    ).toBeNull();
    expect(await ledger.release(hold.reservationId)).toBe(false);
    const h2 = await ledger.reserve({ userId: 'u1', amountNano: 95_000n });
    if (!h2.ok) throw new Error('unreachable');
    expect(await ledger.release(h2.reservationId)).toBe(true);
    expect(await ledger.release(h2.reservationId)).toBe(false);
    expect(await ledger.balance('u1')).toEqual({
      balanceNano: 895_000n,
      reservedNano: 0n,
      spendNano: 105_000n,
    });
    expect(await sumOfEntries(db, 'u1')).toBe(895_000n);
    expect(await sumOfEntries(db, 'provider:0xabc')).toBe(100_000n);
  });

  test.skipIf(skip)('behavior: a ref credits once, also when concurrent', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ledger.credit({ userId: i % 2 ? 'u2' : 'u3', amountNano: 7n, ref: 'pay-x' }),
      ),
    );
    expect(results.filter((r) => r.credited)).toHaveLength(1);
    const winner = results.find((r) => r.credited)!;
    const owner = (await ledger.balance('u2')).balanceNano === 7n ? 'u2' : 'u3';
    for (const r of results.filter((x) => !x.credited))
      expect(r).toMatchObject({ userId: owner, amountNano: 7n });
    expect(winner.balanceNano).toBe(7n);
    expect((await ledger.balance('u2')).balanceNano + (await ledger.balance('u3')).balanceNano).toBe(7n);
  });

  test.skipIf(skip)('behavior: settle caps the charge at the reservation', async () => {
    await ledger.credit({ userId: 'u4', amountNano: 1_000n, ref: 'pay-4' });
    const hold = await ledger.reserve({ userId: 'u4', amountNano: 100n });
    if (!hold.ok) throw new Error('unreachable');
    const out = await ledger.settle({
      reservationId: hold.reservationId,
      providerNano: 500n,
      feeNano: 50n,
      providerAccountId: 'provider:n',
    });
    expect(out).toMatchObject({ chargedNano: 100n, providerNano: 100n, feeNano: 0n });
    expect(await ledger.balance('u4')).toEqual({ balanceNano: 900n, reservedNano: 0n, spendNano: 100n });
  });

  test.skipIf(skip)('error: reserving more than the balance, or with no account', async () => {
    await ledger.credit({ userId: 'u5', amountNano: 10n, ref: 'pay-5' });
    expect(await ledger.reserve({ userId: 'u5', amountNano: 11n })).toEqual({
      ok: false,
      reason: 'insufficient_credits',
    });
    expect(await ledger.reserve({ userId: 'nobody', amountNano: 1n })).toEqual({
      ok: false,
      reason: 'insufficient_credits',
    });
    expect(await ledger.balance('u5')).toEqual({ balanceNano: 10n, reservedNano: 0n, spendNano: 0n });
    await expect(ledger.credit({ userId: 'u5', amountNano: 0n, ref: 'z' })).rejects.toThrow();
  });

  test.skipIf(skip)(
    'behavior: 500 concurrent reservations against a balance covering exactly N',
    async () => {
      const COST = 1_234_567n;
      const N = 137;
      await ledger.credit({ userId: 'u6', amountNano: COST * BigInt(N), ref: 'pay-6' });
      const outcomes = await Promise.all(
        Array.from({ length: 500 }, async () => {
          const hold = await ledger.reserve({ userId: 'u6', amountNano: COST });
          if (!hold.ok) return 402;
          await ledger.settle({
            reservationId: hold.reservationId,
            providerNano: COST,
            feeNano: 0n,
            providerAccountId: 'p6',
          });
          return 200;
        }),
      );
      expect(outcomes.filter((s) => s === 200)).toHaveLength(N);
      expect(outcomes.filter((s) => s === 402)).toHaveLength(500 - N);
      expect(await ledger.balance('u6')).toEqual({
        balanceNano: 0n,
        reservedNano: 0n,
        spendNano: COST * BigInt(N),
      });
      expect(await sumOfEntries(db, 'u6')).toBe(0n);
    },
  );

  test.skipIf(skip)(
    'behavior: operations issued together commit together, and one failure fails alone',
    async () => {
      await ledger.credit({ userId: 'u7', amountNano: 1_000n, ref: 'pay-u7' });
      const first = await ledger.reserve({ userId: 'u7', amountNano: 100n, reservationId: 'dup-u7' });
      expect(first.ok).toBe(true);
      // Issued in one tick: one group commit. The duplicate reservation id breaks the batch's
      // transaction; the others are then run alone and still succeed.
      const results = await Promise.allSettled([
        ledger.reserve({ userId: 'u7', amountNano: 100n }),
        ledger.reserve({ userId: 'u7', amountNano: 100n, reservationId: 'dup-u7' }),
        ledger.reserve({ userId: 'u7', amountNano: 100n }),
        ledger.reserve({ userId: 'u7', amountNano: 10_000n }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value.ok : null))).toEqual([
        true,
        null,
        true,
        false,
      ]);
      expect(await ledger.balance('u7')).toEqual({ balanceNano: 700n, reservedNano: 300n, spendNano: 0n });
      expect(await sumOfEntries(db, 'u7')).toBe(await storedBalance(db, 'u7'));
      // The same four, valid, in one transaction.
      const before = ledger.stats.transactions;
      const ok = await Promise.all(
        Array.from({ length: 4 }, () => ledger.reserve({ userId: 'u7', amountNano: 10n })),
      );
      expect(ok.every((r) => r.ok)).toBe(true);
      await ledger.idle(); // committed (on SQLite a hold is answered before its commit)
      expect(ledger.stats.transactions - before).toBe(1);
    },
  );

  test.skipIf(skip)(
    'behavior: settlements committed together pay each provider and the platform once',
    async () => {
      await ledger.credit({ userId: 'u10', amountNano: 10_000n, ref: 'pay-u10' });
      const holds = await Promise.all(
        Array.from({ length: 5 }, () => ledger.reserve({ userId: 'u10', amountNano: 1_000n })),
      );
      await ledger.idle();
      const feesBefore = await sumOfEntries(db, PLATFORM_ACCOUNT_ID);
      const before = ledger.stats.transactions;
      const outcomes = await Promise.all(
        holds.map((hold, i) => {
          if (!hold.ok) throw new Error('unreachable');
          return ledger.settle({
            reservationId: hold.reservationId,
            providerNano: 100n * BigInt(i + 1),
            feeNano: 10n,
            providerAccountId: providerAccountId(i < 3 ? '0xAAA' : '0xBBB'),
          });
        }),
      );
      await ledger.idle();
      expect(ledger.stats.transactions - before).toBe(1);
      expect(outcomes.map((o) => o?.chargedNano)).toEqual([110n, 210n, 310n, 410n, 510n]);
      const entries = await db
        .selectFrom('ledger_entries')
        .select(['account_id', 'kind', 'amount'])
        .where('account_id', 'in', ['provider:0xaaa', 'provider:0xbbb'])
        .orderBy('account_id')
        .execute();
      expect(entries.map((e) => [e.account_id, e.kind, toBigInt(e.amount)])).toEqual([
        ['provider:0xaaa', 'provider_credit', 600n],
        ['provider:0xbbb', 'provider_credit', 900n],
      ]);
      expect((await ledger.balance('provider:0xbbb')).balanceNano).toBe(900n);
      expect((await sumOfEntries(db, PLATFORM_ACCOUNT_ID)) - feesBefore).toBe(50n);
      expect((await ledger.balance(PLATFORM_ACCOUNT_ID)).balanceNano).toBe(
        await sumOfEntries(db, PLATFORM_ACCOUNT_ID),
      );
      expect((await ledger.balance('u10')).balanceNano).toBe(10_000n - 1_550n);
      expect(await sumOfEntries(db, 'u10')).toBe(10_000n - 1_550n);
    },
  );

  test.skipIf(skip)('behavior: a ledger read sees every operation queued before it', async () => {
    await ledger.credit({ userId: 'u8', amountNano: 1_000n, ref: 'pay-u8' });
    const queued = ledger.reserve({ userId: 'u8', amountNano: 100n }); // not awaited: still queued
    expect(await ledger.balance('u8')).toEqual({ balanceNano: 900n, reservedNano: 100n, spendNano: 0n });
    expect((await queued).ok).toBe(true);
  });

  test.skipIf(skip)('behavior: holds left by an interrupted request are released once stale', async () => {
    await ledger.credit({ userId: 'u9', amountNano: 1_000n, ref: 'pay-u9' });
    const start = Date.now() + 10 * 86_400_000; // later than every hold the other tests left
    clock.set(start);
    const old = await ledger.reserve({ userId: 'u9', amountNano: 300n });
    clock.set(start + 50_000);
    const fresh = await ledger.reserve({ userId: 'u9', amountNano: 200n });
    expect(old.ok && fresh.ok).toBe(true);
    clock.set(start + 59_000);
    await ledger.releaseStaleHolds(60_000); // the others' leftovers
    expect(await ledger.balance('u9')).toEqual({ balanceNano: 500n, reservedNano: 500n, spendNano: 0n });
    clock.set(start + 61_000);
    expect(await ledger.releaseStaleHolds(60_000)).toBe(1);
    expect(await ledger.balance('u9')).toEqual({ balanceNano: 800n, reservedNano: 200n, spendNano: 0n });
    expect(await sumOfEntries(db, 'u9')).toBe(await storedBalance(db, 'u9'));
    // Released holds can't be settled any more; a second sweep finds nothing.
    if (!old.ok) throw new Error('unreachable');
    expect(
      await ledger.settle({
        reservationId: old.reservationId,
        providerNano: 1n,
        feeNano: 0n,
        providerAccountId: 'p',
      }),
    ).toBeNull();
    expect(await ledger.releaseStaleHolds(60_000)).toBe(0);
  });

  test.skipIf(skip)(
    'behavior: every account balance equals the sum of its entries, none negative',
    async () => {
      const accounts = await db
        .selectFrom('ledger_accounts')
        .select(['account_id', 'balance', 'reserved'])
        .execute();
      expect(accounts.length).toBeGreaterThan(3);
      for (const a of accounts) {
        expect(toBigInt(a.balance)).toBe(await sumOfEntries(db, a.account_id));
        expect(toBigInt(a.balance) >= 0n && toBigInt(a.reserved) >= 0n).toBe(true);
      }
    },
  );
});
