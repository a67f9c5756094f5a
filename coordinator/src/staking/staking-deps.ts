import type { Kysely } from 'kysely';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { TransferOutbox } from '../chain/transfer-outbox.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import type { Keyring } from '../wallets/keyring.js';

/** What the staking operations need. */
export type StakingDeps = {
  db: Kysely<Database>;
  services: ChainServices;
  keyring: Keyring;
  clock: Clock;
  /** The outbox, with the pool's purposes registered (pool-transfers.ts). */
  outbox: TransferOutbox;
};
