/**
 * A coordinator's books as the vault era left them (before StakingPool.sol): stake held by the
 * staking vault, the ledger's positions (stakes, with that era's reward index and accrued rewards),
 * unbondings with no place on the chain, stake events with random ids, and transfers of that era's
 * outbox purposes left pending — a release of a due unbonding, a slash whose tokens never left the
 * vault, a reward claim. The vault holds what it owes (funded by `devnet.fund` here, as the stakes
 * themselves once did).
 */
import { randomUUID } from 'node:crypto';
import { type Address, getAddress, type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { NATIVE_TRANSFER_GAS } from '../../coordinator/src/chain/constants.js';
import { enqueueTransfer } from '../../coordinator/src/chain/enqueue-transfer.js';
import { signIn, type TestApp } from '../../coordinator/src/testing/index.js';
import { type Devnet, proxyAddressOf } from '../chain-fixture.js';

/** The vault era's reward index grew at this APY (bps) for this long before the migration. */
export const VAULT_APY_BPS = 500n;
export const VAULT_INDEX_AGE_S = 1_000n;

export type VaultOwner = {
  name: string;
  userId: string;
  /** The owner's connected wallet (a slash names it). */
  address: Address;
  proxy: Address;
  stakedWei: bigint;
  /** Open unbondings: amount and release time (ms). */
  unbondings: { id: string; amountWei: bigint; releaseAtMs: number }[];
};

export type VaultEra = {
  owners: VaultOwner[];
  /** The pending transfers of that era, by purpose. */
  legacy: { release: string; slash: string; claim: string };
  slashId: string;
  slashWei: bigint;
  payoutId: string;
  payoutWei: bigint;
  /** What the vault owes: Σ staked + unbonding + the slash's tokens. */
  owedWei: bigint;
};

const fakeHash = () => `0x${randomUUID().replaceAll('-', '').padEnd(64, '0')}` as Hex;

/**
 * Three owners: alice 1,000 staked; bob 250 staked and 50 unbonding (30 min left); carol 40 staked,
 * 10 unbonding already due with its release pending in the outbox, and a 4 TOK slash whose transfer
 * to the rewards vault is pending; alice's 1 TOK reward claim pending too.
 */
export async function buildVaultEra(t: TestApp, devnet: Devnet): Promise<VaultEra> {
  const now = t.clock.now();
  const vault = devnet.vaults.staking.address;
  const owners: VaultOwner[] = [];
  for (const [name, staked] of [
    ['alice', parseEther('1000')],
    ['bob', parseEther('250')],
    ['carol', parseEther('40')],
  ] as const) {
    const key = privateKeyToAccount(generatePrivateKey());
    const jwt = await signIn(t.app, key);
    const proxy = await proxyAddressOf(t.app, jwt);
    const user = await t.db
      .selectFrom('users')
      .select('id')
      .where('address', '=', getAddress(key.address))
      .executeTakeFirstOrThrow();
    await t.db
      .insertInto('stakes')
      .values({
        user_id: user.id,
        address: getAddress(key.address),
        quantity_wei: staked.toString(),
        tier: 'basic',
        multiplier_bps: 10_000n,
        index_snapshot: '0',
        accrued_scaled: '0',
        updated_at: now,
      })
      .execute();
    await t.db
      .insertInto('stake_events')
      .values({
        id: randomUUID(),
        user_id: user.id,
        kind: 'stake',
        amount_wei: staked.toString(),
        tx_hash: fakeHash(),
        created_at: now,
      })
      .execute();
    owners.push({
      name,
      userId: user.id,
      address: getAddress(key.address),
      proxy,
      stakedWei: staked,
      unbondings: [],
    });
  }
  await t.db
    .insertInto('reward_index')
    .values({
      id: 'global',
      value: '0',
      at_s: BigInt(Math.floor(now / 1000)) - VAULT_INDEX_AGE_S,
      apy_bps: VAULT_APY_BPS,
    })
    .execute();
  const [alice, bob, carol] = owners as [VaultOwner, VaultOwner, VaultOwner];
  const unbond = async (owner: VaultOwner, amountWei: bigint, releaseAtMs: number, status: string) => {
    const id = randomUUID();
    await t.db
      .insertInto('unbondings')
      .values({
        id,
        user_id: owner.userId,
        amount_wei: amountWei.toString(),
        release_at: releaseAtMs,
        status,
        tx_hash: null,
        created_at: now,
      })
      .execute();
    owner.unbondings.push({ id, amountWei, releaseAtMs });
    return id;
  };
  await unbond(bob, parseEther('50'), now + 30 * 60_000, 'unbonding');
  const due = await unbond(carol, parseEther('10'), now - 60_000, 'releasing');
  const release = await enqueueTransfer(t.db, {
    purpose: 'release',
    ref: due,
    from: vault,
    to: carol.proxy,
    valueWei: parseEther('10'),
    gas: NATIVE_TRANSFER_GAS,
    asset: 'native',
    amount: parseEther('10'),
    now,
  });

  const slashId = randomUUID();
  const slashWei = parseEther('4');
  const slashEvent = randomUUID();
  await t.db
    .insertInto('stake_events')
    .values({
      id: slashEvent,
      user_id: carol.userId,
      kind: 'slash',
      amount_wei: slashWei.toString(),
      tx_hash: null,
      evidence: '{"verifications":[]}',
      created_at: now,
    })
    .execute();
  const slash = await enqueueTransfer(t.db, {
    purpose: 'slash',
    ref: slashId,
    from: vault,
    to: devnet.vaults.rewards.address,
    valueWei: slashWei - NATIVE_TRANSFER_GAS * 150_000_000_000n,
    gas: NATIVE_TRANSFER_GAS,
    asset: 'native',
    amount: slashWei,
    now,
  });
  await t.db
    .insertInto('slashes')
    .values({
      id: slashId,
      node_id: '0x'.padEnd(42, '5'),
      owner: carol.address.toLowerCase(),
      fraction_bps: 1_000,
      evidence: '{"verifications":[]}',
      status: 'signing',
      amount_wei: slashWei.toString(),
      stake_event_id: slashEvent,
      tx_hash: null,
      raw_tx: `transfer:${slash}`,
      created_at: now,
      updated_at: now,
    })
    .execute();

  const payoutId = randomUUID();
  const payoutWei = parseEther('1');
  await t.db
    .insertInto('reward_payouts')
    .values({
      id: payoutId,
      user_id: alice.userId,
      amount_wei: payoutWei.toString(),
      status: 'pending',
      tx_hash: null,
      created_at: now,
    })
    .execute();
  const claim = await enqueueTransfer(t.db, {
    purpose: 'claim',
    ref: payoutId,
    from: devnet.vaults.rewards.address,
    to: alice.proxy,
    valueWei: payoutWei,
    gas: NATIVE_TRANSFER_GAS,
    asset: 'native',
    amount: payoutWei,
    now,
  });

  const owedWei = owners.reduce(
    (sum, o) => sum + o.stakedWei + o.unbondings.reduce((u, x) => u + x.amountWei, 0n),
    slashWei,
  );
  return { owners, legacy: { release, slash, claim }, slashId, slashWei, payoutId, payoutWei, owedWei };
}
