import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach } from 'vitest';
import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { providerAccountId } from '../db/tables/ledger.js';
import { USAGE_STATUS } from '../db/tables/usage.js';
import { Ledger } from '../ledger/ledger.js';
import type { TestBackend, TestDatabase } from './test-backends.js';
import { createTestClock, type TestClock } from './test-clock.js';

/** A paid job to bill: its client, its node (and the node's owner, who is credited), its split. */
export type PaidJob = {
  userId: string;
  nodeId: string;
  owner?: string;
  providerNano: bigint;
  feeNano: bigint;
  at: number;
};

export type LedgerFixture = {
  readonly store: Store;
  readonly db: Kysely<Database>;
  readonly ledger: Ledger;
  readonly clock: TestClock;
  /** An account's balance. */
  balance(accountId: string): Promise<bigint>;
  /** Sum of every balance and reserve: what only moves money between accounts never changes it. */
  total(): Promise<bigint>;
  /** A client's top-up. */
  fund(userId: string, nano: bigint): Promise<unknown>;
  /** One paid job, billed the way the router bills it (hold, settle, usage row); what it charged. */
  serve(job: PaidJob): Promise<bigint>;
};

/**
 * A fresh database of `backend` and a real Ledger for each test (opened before it, closed after it,
 * the clock set back to `startMs`), with paid jobs billed as the router bills them: for tests of
 * what happens to money afterwards (convictions, suspensions). Call inside a describeBackends suite.
 */
export function ledgerFixture(backend: TestBackend, label: string, startMs: number): LedgerFixture {
  let opened: TestDatabase;
  let ledger: Ledger;
  const clock = createTestClock(startMs);

  beforeEach(async () => {
    opened = await backend.open(label);
    clock.set(startMs);
    ledger = new Ledger(opened.store, { clock });
  });
  afterEach(async () => {
    await ledger.close();
    await opened.close();
  });

  return {
    get store() {
      return opened.store;
    },
    get db() {
      return opened.db;
    },
    get ledger() {
      return ledger;
    },
    clock,
    balance: async (accountId) => (await ledger.balance(accountId)).balanceNano,
    async total() {
      await ledger.idle();
      const row = await opened.db
        .selectFrom('ledger_accounts')
        .select(sql<string | number>`coalesce(sum(balance + reserved), 0)`.as('total'))
        .executeTakeFirstOrThrow();
      return toBigInt(row.total);
    },
    fund: (userId, nano) => ledger.credit({ userId, amountNano: nano, ref: `pay-${newId()}` }),
    async serve(j) {
      clock.set(j.at);
      const hold = await ledger.reserve({
        userId: j.userId,
        amountNano: j.providerNano + j.feeNano + 1_000n,
      });
      if (!hold.ok) throw new Error('the test client cannot pay');
      const outcome = await ledger.settle({
        reservationId: hold.reservationId,
        providerNano: j.providerNano,
        feeNano: j.feeNano,
        providerAccountId: providerAccountId(j.owner ?? j.nodeId),
        usage: {
          requestId: `req-${newId()}`,
          userId: j.userId,
          keyId: null,
          model: 'acme/liar-7b',
          // As the node sends it (checksummed): lookups by node id must be case-blind.
          nodeId: j.nodeId.toUpperCase().replace('0X', '0x'),
          kind: 'chat',
          promptTokens: 10,
          completionTokens: 20,
          status: USAGE_STATUS.completed,
          now: j.at,
        },
      });
      return outcome!.chargedNano;
    },
  };
}
