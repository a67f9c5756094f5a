import type { Kysely } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { Statement } from '../db/statement.js';
import { ApiError } from '../errors.js';
import { nanoToUsd } from '../ledger/money.js';

const selectSpend = new Statement<{ spend_nano: string | number | bigint }>(
  'select spend_nano from api_keys where id = ?',
);

/**
 * Per-key credit limits (a key created with `limit`): a request is admitted only while the key's
 * committed spend, plus the worst case of its requests in flight, plus this one's worst case stay
 * within the limit — else 402 key_credit_limit_reached. A request's worst case counts as in flight
 * until its settlement committed, so within one coordinator a key never spends past its limit.
 * Replicas each count their own requests in flight: concurrent requests through several replicas
 * can pass the limit by at most their holds (the committed spend is shared).
 */
export class KeyLimits {
  readonly #db: Kysely<Database>;
  readonly #inFlight = new Map<string, bigint>();

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Admits `amountNano` more for the key; `done` gives it back (once the settlement committed). */
  async admit(keyId: string, limitNano: bigint, amountNano: bigint): Promise<{ done(): void }> {
    // Counted first, so concurrent admissions see each other while the spend is read.
    this.#add(keyId, amountNano);
    let given = false;
    const done = () => {
      if (given) return;
      given = true;
      this.#add(keyId, -amountNano);
    };
    try {
      const row = await selectSpend.first(this.#db, [keyId]);
      const spend = row ? toBigInt(row.spend_nano) : 0n;
      if (spend + (this.#inFlight.get(keyId) ?? 0n) > limitNano) {
        throw new ApiError(
          'key_credit_limit_reached',
          `This request may cost up to $${nanoToUsd(amountNano)}; the key's limit of $${nanoToUsd(limitNano)} has $${nanoToUsd(limitNano > spend ? limitNano - spend : 0n)} left, less requests in flight.`,
        );
      }
    } catch (error) {
      done();
      throw error;
    }
    return { done };
  }

  #add(keyId: string, delta: bigint): void {
    const next = (this.#inFlight.get(keyId) ?? 0n) + delta;
    if (next === 0n) this.#inFlight.delete(keyId);
    else this.#inFlight.set(keyId, next);
  }
}
