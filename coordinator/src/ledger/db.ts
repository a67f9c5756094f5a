import type { Kysely } from 'kysely';
import type { LedgerTables } from './tables.js';

/** The database handle the ledger works on. */
export type LedgerDb = Kysely<LedgerTables>;

/** Time source (ms since the epoch); the coordinator injects its clock. */
export type LedgerClock = { now(): number };

export const systemLedgerClock: LedgerClock = { now: () => Date.now() };
