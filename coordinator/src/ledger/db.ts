import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { Database } from '../db/schema.js';

/** The database handle the ledger works on. */
export type LedgerDb = Kysely<Database>;

/** Time source (ms since the epoch); the coordinator injects its clock. */
export type LedgerClock = Clock;

export const systemLedgerClock: LedgerClock = systemClock;
