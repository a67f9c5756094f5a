/**
 * Payouts: a node owner's earnings (`provider:<owner>`) sent on chain from the treasury, through
 * the transfer outbox (chain/transfer-outbox.ts; the payout's side of it: payout-transfers.ts).
 *
 * The order makes it safe against races, retries and crashes, and tells nobody what the treasury
 * holds who could not be paid anyway:
 * 1. The request: the recipient (never the zero address, never a wallet this service manages),
 *    then the owner's earnings (insufficient_earnings, 402), and only then the treasury, counting
 *    what it already has in flight (treasury_unavailable, 503).
 * 2. In one database transaction: the owner's earnings account is locked, the daily cap and the
 *    minimum checked, the payout row inserted, the earnings debited (a guarded debit: it never
 *    takes more than the balance) and the transfer enqueued. Twenty concurrent payouts for an
 *    account that covers three debit three times; the others are refused before anything touches
 *    the chain.
 * 3. The outbox: in the treasury's queue the treasury is checked again, the transaction signed and
 *    its bytes stored before they are broadcast; the receipt marks the payout paid. A payout whose
 *    process died, or whose receipt wait timed out, is finished by the outbox's sweep
 *    (settle-payouts.ts): the stored bytes are mined at most once, and a payout that can never
 *    reach the chain gives its earnings back.
 * A retry with the same Idempotency-Key answers the first payout; nothing is paid twice.
 */
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  getAddress,
  type Hex,
  isAddress,
  zeroAddress,
} from 'viem';
import {
  NATIVE_DECIMALS,
  NATIVE_TRANSFER_GAS,
  PAYMENT_SOURCES,
  type PaymentSource,
  STABLE_DECIMALS,
  STABLE_TRANSFER_GAS,
} from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { enqueueTransfer } from '../chain/enqueue-transfer.js';
import type { TransferOutbox } from '../chain/transfer-outbox.js';
import type { Clock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import { isPostgres } from '../db/dialect.js';
import { lockInTransaction } from '../db/lock-in-transaction.js';
import type { Database } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { providerAccountId } from '../db/tables/ledger.js';
import { OPEN_OR_PAID, PAYOUT_STATUS, type ProviderPayoutsTable } from '../db/tables/provider.js';
import { ApiError } from '../errors.js';
import { nanoToUsd, usdToNano } from '../ledger/money.js';
import { debitEarnings } from '../ledger/payout-entries.js';
import { suspendedNodeOf } from '../trust/standing/standings.js';
import { findManagedAddresses } from '../wallets/find-managed-addresses.js';
import { assertTreasuryCovers, PAYOUT_PURPOSE } from './payout-transfers.js';

const DAY_MS = 86_400_000;
/** nanousd per smallest unit of a stable (6 decimals). */
const NANO_PER_STABLE_UNIT = 10n ** BigInt(9 - STABLE_DECIMALS);

export type PayoutDeps = {
  store: Store;
  services: ChainServices;
  clock: Clock;
  /** The outbox the payout's transfer goes through (payoutTransfers registered for 'payout'). */
  outbox: TransferOutbox;
  limits: { minNano: bigint; dailyCapNano: bigint };
};

export type PayoutRequest = {
  owner: string;
  token: string;
  /** USD as a decimal string; absent: the whole earnings balance. */
  amount?: string | undefined;
  /** Recipient; absent: the owner's own wallet. */
  to?: string | undefined;
  idempotencyKey?: string | undefined;
};

export type PayoutView = {
  id: string;
  status: ProviderPayoutsTable['status'];
  token: string;
  /** In whole tokens of `token`, exact ("0.0366"). */
  amount: string;
  amountUsd: number;
  to: string;
  txId: string | null;
  error: string | null;
  createdAt: string;
};

type PayoutRow = Omit<ProviderPayoutsTable, 'usd_nano' | 'created_at' | 'updated_at'> & {
  usd_nano: string | number | bigint;
  created_at: string | number | bigint;
  updated_at: string | number | bigint;
};

/** Sends earnings to the owner's wallet (or `to`); answers the payout as it stands. */
export async function requestPayout(deps: PayoutDeps, request: PayoutRequest): Promise<PayoutView> {
  const { store, services, outbox } = deps;
  const treasury = services.treasury?.account;
  if (!treasury) throw new ApiError('treasury_unavailable', 'No treasury is configured on this coordinator.');
  const owner = request.owner.toLowerCase();
  const token = parseToken(services, request.token);
  const to = parseRecipient(request.to ?? owner);
  const requestedNano = request.amount === undefined ? undefined : parseAmount(request.amount);
  if ((await findManagedAddresses(store.db, services, [to])).size > 0) {
    throw new ApiError(
      'recipient_not_allowed',
      'Payouts go to a wallet of your own, not to one this service manages.',
      {
        param: 'to',
      },
    );
  }
  if (request.idempotencyKey) {
    const earlier = await findByKey(store, owner, request.idempotencyKey);
    if (earlier) return answerRetry(services, earlier, { token, to, requestedNano });
  }
  // The earnings first: a payout they do not cover is 402 whatever the treasury holds, so an
  // amount over them tells nothing about the treasury. Checked again where they are debited.
  const earnings = await balanceOf(store, providerAccountId(owner));
  const quick = toTokenUnits(services, token, requestedNano ?? earnings);
  if (quick.usdNano > earnings) throw new ApiError('insufficient_earnings', undefined, { param: 'amount' });
  // A treasury that cannot pay is refused before the earnings move (checked again in its queue).
  if (quick.units > 0n) await assertTreasuryCovers(store.db, services, { token, units: quick.units });

  const id = randomUUID();
  let transferId: string;
  try {
    transferId = await debit(deps, {
      id,
      owner,
      token,
      to,
      requestedNano,
      key: request.idempotencyKey ?? null,
    });
  } catch (error) {
    // The same key raced itself: the other request inserted first; answer it.
    if (request.idempotencyKey && !(error instanceof ApiError)) {
      const earlier = await findByKey(store, owner, request.idempotencyKey);
      if (earlier) return answerRetry(services, earlier, { token, to, requestedNano });
    }
    throw error;
  }
  const { error } = await outbox.process(transferId);
  const row = (await findById(store, id))!;
  // Failed (refused before signing, reverted, replaced): the earnings are back; say why. Still
  // open (a receipt wait that timed out, an RPC that failed after the bytes were stored): 202,
  // and the outbox's sweep finishes it from the chain.
  if (row.status === PAYOUT_STATUS.failed) throw error ?? new ApiError('chain_tx_failed');
  return view(row);
}

/** The owner's payouts, newest first. */
export async function listPayouts(store: Store, owner: string, limit = 100): Promise<PayoutView[]> {
  const rows = await store.db
    .selectFrom('provider_payouts')
    .selectAll()
    .where('owner', '=', owner.toLowerCase())
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(view);
}

async function debit(
  { store, services, clock, limits }: PayoutDeps,
  p: {
    id: string;
    owner: string;
    token: PaymentSource;
    to: Address;
    requestedNano: bigint | undefined;
    key: string | null;
  },
): Promise<string> {
  const accountId = providerAccountId(p.owner);
  return store.db.transaction().execute(async (trx) => {
    // Not while a node of this owner is being convicted (trust/slashing/convict.ts takes the same lock and
    // counts on the account not shrinking under it).
    await lockInTransaction(trx, `earnings:${accountId}`);
    // One payout of an owner at a time (PostgreSQL; SQLite serializes writers): the cap and the
    // balance are read and moved without another payout in between.
    let lock = trx.selectFrom('ledger_accounts').select('balance').where('account_id', '=', accountId);
    if (isPostgres(store.db)) lock = lock.forUpdate();
    const account = await lock.executeTakeFirst();
    await refuseWhileSuspended(trx, p.owner);
    const balance = account ? toBigInt(account.balance) : 0n;
    const { units, usdNano } = toTokenUnits(services, p.token, p.requestedNano ?? balance);
    if (units <= 0n || usdNano < limits.minNano) {
      throw new ApiError(
        'payout_below_minimum',
        `The smallest payout is ${nanoToUsd(limits.minNano)} USD${p.requestedNano === undefined ? ' and your earnings are below it' : ''}.`,
        { param: 'amount' },
      );
    }
    if (usdNano > balance) throw new ApiError('insufficient_earnings', undefined, { param: 'amount' });
    const now = clock.now();
    const recent = await trx
      .selectFrom('provider_payouts')
      .select(sql<string | number | bigint>`coalesce(sum(usd_nano), 0)`.as('total'))
      .where('owner', '=', p.owner)
      .where('status', 'in', OPEN_OR_PAID)
      .where('created_at', '>', now - DAY_MS)
      .executeTakeFirstOrThrow();
    if (toBigInt(recent.total) + usdNano > limits.dailyCapNano) {
      throw new ApiError(
        'payout_limit_exceeded',
        `Payouts are capped at ${nanoToUsd(limits.dailyCapNano)} USD per 24 hours.`,
        { param: 'amount', retryAfterS: 3600 },
      );
    }
    await trx
      .insertInto('provider_payouts')
      .values({
        id: p.id,
        owner: p.owner,
        idempotency_key: p.key,
        token: p.token,
        amount: units.toString(),
        usd_nano: usdNano,
        to_address: p.to,
        status: PAYOUT_STATUS.pending,
        tx_hash: null,
        raw_tx: null,
        error_code: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    if (!(await debitEarnings(trx, { owner: p.owner, usdNano, payoutId: p.id, now }))) {
      throw new ApiError('insufficient_earnings', undefined, { param: 'amount' });
    }
    const tokenAddress = p.token === 'native' ? undefined : services.tokens[p.token]!;
    return enqueueTransfer(trx, {
      purpose: PAYOUT_PURPOSE,
      ref: p.id,
      from: services.treasury!.address,
      ...(tokenAddress
        ? {
            to: tokenAddress,
            data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [p.to, units] }),
            gas: STABLE_TRANSFER_GAS,
          }
        : { to: p.to, valueWei: units, gas: NATIVE_TRANSFER_GAS }),
      asset: tokenAddress ?? 'native',
      amount: units,
      now,
    });
  });
}

/**
 * Refuses a payout (`node_suspended`) while any node linked to `owner` is suspended: a suspension
 * holds the owner's earnings until an operator reinstates the node. A convicted node's own share
 * was forfeited in the conviction, but what its owner's account still holds cannot be told apart
 * from it for sure (jobs settling after the conviction, earnings of a node suspended on reputation,
 * which forfeits nothing), so nothing leaves until the operator has looked. Checked before the
 * chain is touched (payout-routes.ts) and again in the debit's transaction.
 */
export async function refuseWhileSuspended(db: Kysely<Database>, owner: string): Promise<void> {
  const suspended = await suspendedNodeOf(db, owner);
  if (suspended) {
    throw new ApiError(
      'node_suspended',
      `Your node ${suspended} is suspended: payouts are held until an operator reinstates it.`,
    );
  }
}

/**
 * nanousd → the token's smallest unit, rounded down, and the nanousd that pays for exactly that:
 * stables are 1 USD per token, so 1 unit = 1,000 nanousd (a remainder below that stays in the
 * earnings); native token at the configured price, the whole amount debited.
 */
export function toTokenUnits(
  services: Pick<ChainServices, 'nativeUsdPriceNano'>,
  token: PaymentSource,
  nano: bigint,
): { units: bigint; usdNano: bigint } {
  if (nano <= 0n) return { units: 0n, usdNano: 0n };
  if (token === 'native') {
    if (services.nativeUsdPriceNano <= 0n) return { units: 0n, usdNano: 0n };
    return { units: (nano * 10n ** BigInt(NATIVE_DECIMALS)) / services.nativeUsdPriceNano, usdNano: nano };
  }
  const units = nano / NANO_PER_STABLE_UNIT;
  return { units, usdNano: units * NANO_PER_STABLE_UNIT };
}

function parseToken(services: ChainServices, token: string): PaymentSource {
  if (!(PAYMENT_SOURCES as readonly string[]).includes(token)) {
    throw new ApiError('invalid_request', `token must be one of ${PAYMENT_SOURCES.join(', ')}.`, {
      param: 'token',
    });
  }
  if (token !== 'native' && !services.tokens[token as Exclude<PaymentSource, 'native'>]) {
    throw new ApiError('invalid_request', `${token} is not configured here.`, { param: 'token' });
  }
  return token as PaymentSource;
}

function parseRecipient(to: string): Address {
  if (!isAddress(to, { strict: false })) {
    throw new ApiError('invalid_request', 'to must be an EVM address.', { param: 'to' });
  }
  // Tokens sent there are burnt, and a token contract reverts the transfer (gas paid for nothing).
  if (getAddress(to) === zeroAddress) {
    throw new ApiError('invalid_request', 'to must not be the zero address.', { param: 'to' });
  }
  return getAddress(to);
}

function parseAmount(amount: string): bigint {
  const nano = usdToNano(amount);
  if (nano === null || nano <= 0n) {
    throw new ApiError('invalid_request', 'amount must be a positive USD decimal string, e.g. "12.5".', {
      param: 'amount',
    });
  }
  return nano;
}

async function balanceOf(store: Store, accountId: string): Promise<bigint> {
  const row = await store.db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? toBigInt(row.balance) : 0n;
}

function findByKey(store: Store, owner: string, key: string): Promise<PayoutRow | undefined> {
  return store.db
    .selectFrom('provider_payouts')
    .selectAll()
    .where('owner', '=', owner)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

function findById(store: Store, id: string): Promise<PayoutRow | undefined> {
  return store.db.selectFrom('provider_payouts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A retry answers the first payout, if it asked for the same thing. */
function answerRetry(
  services: ChainServices,
  row: PayoutRow,
  asked: { token: PaymentSource; to: Address; requestedNano: bigint | undefined },
): PayoutView {
  const same =
    row.token === asked.token &&
    getAddress(row.to_address) === asked.to &&
    (asked.requestedNano === undefined ||
      toTokenUnits(services, asked.token, asked.requestedNano).usdNano === toBigInt(row.usd_nano));
  if (!same) throw new ApiError('idempotency_conflict', undefined, { param: 'Idempotency-Key' });
  return view(row);
}

function view(row: PayoutRow): PayoutView {
  const decimals = row.token === 'native' ? NATIVE_DECIMALS : STABLE_DECIMALS;
  return {
    id: row.id,
    status: row.status,
    token: row.token,
    amount: formatUnits(BigInt(row.amount), decimals),
    amountUsd: nanoToUsd(toBigInt(row.usd_nano)),
    to: row.to_address,
    txId: row.status === PAYOUT_STATUS.pending ? null : (row.tx_hash as Hex | null),
    error: row.error_code,
    createdAt: new Date(Number(toBigInt(row.created_at))).toISOString(),
  };
}
