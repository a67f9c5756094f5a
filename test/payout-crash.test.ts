/**
 * A coordinator killed (SIGKILL) between broadcasting a payout and recording its receipt pays
 * nothing twice: the real `gpumesh-coordinator` process sends a payout while the chain holds its
 * blocks, dies with the transfer in the pool, and after the restart its settlement finds the
 * receipt and marks the payout paid; a retry with the same Idempotency-Key answers that payout.
 * One transfer on chain, one debit in the ledger, and the reconciliation check finds nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAbiItem, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { loadConfig } from '../coordinator/src/config.js';
import { openStore, type Store } from '../coordinator/src/db/store.js';
import { ENTRY_KINDS, providerAccountId } from '../coordinator/src/db/tables/ledger.js';
import { applyEntry } from '../coordinator/src/ledger/apply-entry.js';
import { reconcile } from '../coordinator/src/reconcile/reconcile.js';
import { until } from '../coordinator/src/testing/until.js';
import { freePort } from './browser/free-port.js';
import { chainOverrides, type Devnet, startDevnet, tokenBalance } from './chain-fixture.js';

const USD = 1_000_000_000n;
const BIN = path.resolve(import.meta.dirname, '../coordinator/bin/gpumesh-coordinator.js');
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

let devnet: Devnet;
let dataDir: string;
let child: ChildProcess | undefined;
const masterKey = randomBytes(32).toString('hex');

beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: the tests wait for blocks, and none of what
  // they check depends on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1 });
  dataDir = mkdtempSync(path.join(tmpdir(), 'gpumesh-payout-crash-'));
}, 60_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await devnet?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function env() {
  const { chain } = chainOverrides(devnet);
  return {
    ...process.env,
    GPUMESH_MASTER_KEY: masterKey,
    GPUMESH_CHAIN_RPC_URL: chain.rpcUrl,
    GPUMESH_CHAIN_NATIVE_SYMBOL: chain.nativeSymbol,
    GPUMESH_CHAIN_NATIVE_USD_PRICE_NANO: String(chain.nativeUsdPriceNano),
    GPUMESH_CHAIN_TOKENS: JSON.stringify(chain.tokens),
    GPUMESH_CHAIN_TREASURY_KEY: chain.treasuryKey,
    GPUMESH_PAYOUTS_MIN_NANO: '1000',
    GPUMESH_PAYOUTS_SETTLE_AFTER_MS: '300',
  };
}

async function startCoordinator(port: number): Promise<string> {
  child = spawn(
    process.execPath,
    [
      BIN,
      `--port=${port}`,
      '--host=127.0.0.1',
      `--data-dir=${dataDir}`,
      '--log-level=silent',
      '--rate-limit-enabled=false',
    ],
    { env: env(), stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const base = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok === true, 30_000);
  return base;
}

async function signInHttp(base: string, account: ReturnType<typeof privateKeyToAccount>): Promise<string> {
  const { message } = (await (await fetch(`${base}/api/auth/nonce?address=${account.address}`)).json()) as {
    message: string;
  };
  const signature = await account.signMessage({ message });
  const verify = await fetch(`${base}/api/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ address: account.address, message, signature }),
  });
  return ((await verify.json()) as { token: string }).token;
}

test('behavior: killed between broadcast and receipt, the restarted coordinator settles the payout once', async () => {
  const port = await freePort();
  let base = await startCoordinator(port);
  const owner = privateKeyToAccount(generatePrivateKey());
  const jwt = await signInHttp(base, owner);
  const store: Store = openStore({ sqlitePath: path.join(dataDir, 'gpumesh.db') });
  try {
    await applyEntry(store.db, {
      accountId: providerAccountId(owner.address),
      kind: ENTRY_KINDS.adjustment,
      amount: 2n * USD,
      ref: 'seed',
      now: Date.now(),
    });
    const { client } = devnet.context;
    // The chain holds its blocks: the payout's transfer waits in the pool, unmined.
    await client.request({ method: 'evm_setIntervalMining' as never, params: [0] as never });
    const key = randomUUID();
    const pay = () =>
      fetch(`${base}/api/provider/payout`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${jwt}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: JSON.stringify({ token: 'USDC.s', amount: '1.5' }),
      });
    const inFlight = pay().catch(() => undefined);
    const row = () =>
      store.db
        .selectFrom('provider_payouts')
        .selectAll()
        .where('idempotency_key', '=', key)
        .executeTakeFirst();
    await until(async () => (await row())?.status === 'sent', 10_000);
    child!.kill('SIGKILL');
    await inFlight;
    expect((await row())?.status).toBe('sent');

    // Blocks again; the transfer is mined while no coordinator runs.
    await client.request({ method: 'evm_setIntervalMining' as never, params: [1] as never });
    const hash = (await row())!.tx_hash as `0x${string}`;
    await client.waitForTransactionReceipt({ hash, timeout: 20_000 });

    base = await startCoordinator(port);
    await until(async () => (await row())?.status === 'paid', 15_000);
    const retry = await pay();
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ id: (await row())!.id, status: 'paid', txId: hash });

    const logs = await client.getLogs({
      address: devnet.tokens['USDC.s'],
      event: TRANSFER,
      args: { from: devnet.treasury.address, to: owner.address },
      fromBlock: 0n,
    });
    expect(logs).toHaveLength(1);
    expect(await tokenBalance(devnet, 'USDC.s', owner.address)).toBe(parseUnits('1.5', 6));
    const balance = await store.db
      .selectFrom('ledger_accounts')
      .select('balance')
      .where('account_id', '=', providerAccountId(owner.address))
      .executeTakeFirstOrThrow();
    expect(BigInt(balance.balance)).toBe(USD / 2n);
    const config = loadConfig({ overrides: { dataDir, masterKey, ...chainOverrides(devnet) } });
    const report = await reconcile({
      db: store.db,
      services: createChainServices(config),
      staleHoldMs: 600_000,
      now: Date.now(),
    });
    expect(report.differences).toEqual([]);
    expect(report.checked.payouts).toBe(1);
  } finally {
    await store.close();
  }
}, 120_000);
