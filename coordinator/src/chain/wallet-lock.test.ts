import { getAddress } from 'viem';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeBackends } from '../testing/describe-backends.js';
import type { TestDatabase } from '../testing/test-backends.js';
import { createWalletLock } from './wallet-lock.js';

const WALLET = '0x00000000000000000000000000000000000000aa';

describeBackends('createWalletLock', (backend) => {
  let store: TestDatabase;
  beforeAll(async () => {
    store = await backend.open('lock');
  });
  afterAll(async () => store?.close());

  test('behavior: two holders (two replicas) of one wallet never overlap', async () => {
    const [a, b] = [createWalletLock(store.db), createWalletLock(store.db)];
    let inside = 0;
    let most = 0;
    const task = async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 5));
      inside--;
    };
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).hold(WALLET, task)));
    expect(most).toBe(1);
    expect(await store.db.selectFrom('wallet_locks').selectAll().execute()).toEqual([]);
  });

  test('behavior: a lease is renewed while its task runs, and a dead holder’s lease expires', async () => {
    // Leases long enough that a loaded machine's timer delays cannot let one lapse between renewals
    // (renewed every third of a lease), short enough that the task outlives several.
    const slow = createWalletLock(store.db, { leaseMs: 450 });
    const other = createWalletLock(store.db, { leaseMs: 450, waitMs: 5_000 });
    const order: string[] = [];
    const first = slow.hold(WALLET, async () => {
      await new Promise((r) => setTimeout(r, 1_500)); // over three leases long
      order.push('slow done');
    });
    await new Promise((r) => setTimeout(r, 20));
    await other.hold(WALLET, async () => {
      order.push('other');
    });
    await first;
    expect(order).toEqual(['slow done', 'other']);

    // A lease nobody renews (its replica died) is taken over once it expires.
    await store.db
      .insertInto('wallet_locks')
      .values({
        address: getAddress('0x00000000000000000000000000000000000000bb'),
        holder: 'dead',
        expires_at: Date.now() + 100,
      })
      .execute();
    const started = Date.now();
    await other.hold('0x00000000000000000000000000000000000000bb', async () => {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(80);
  });

  test('error: a wallet held past the wait is wallet_busy', async () => {
    await store.db
      .insertInto('wallet_locks')
      .values({
        address: getAddress('0x00000000000000000000000000000000000000cc'),
        holder: 'x',
        expires_at: Date.now() + 60_000,
      })
      .execute();
    const impatient = createWalletLock(store.db, { waitMs: 50 });
    await expect(
      impatient.hold('0x00000000000000000000000000000000000000cc', async () => {}),
    ).rejects.toMatchObject({
      code: 'wallet_busy',
    });
  });
});
