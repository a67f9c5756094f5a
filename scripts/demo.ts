/**
 * `npm run demo`: a scripted API client that walks the whole product, printing each step:
 * sign in with the dev wallet → create a key → send real USDC.s to the proxy wallet → top up →
 * a streamed chat through the official openai SDK → usage and the new balance → stake → claim.
 *
 * Without flags it starts its own local network (temporary data directory, free ports) and stops
 * it at the end; `--network <path/to/network.json>` runs against a network `npm start` is running.
 * Exits non-zero on any failure, so it doubles as an end-to-end test.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { NetworkInfo, RunningNetwork } from './network.js';

const TOPUP_USD = 5;
const STAKE_TOKENS = 100;

const USAGE = `usage: npm run demo -- [--network <path/to/network.json>]
  without flags: starts its own local network (temporary folder, free ports), stops it at the end
  --network FILE  run against the network \`npm start\` is running (its <data-dir>/network.json)
`;
let values: { network?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { network: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  }));
} catch (error) {
  process.stderr.write(`npm run demo: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

// Loaded once the flags are read: `--help` and a bad flag answer at once.
const [{ reconcileCommand }, { privateKeyToAccount }, { ApiResponseError, signIn }, { startNetwork }] =
  await Promise.all([
    import('@gpumesh/coordinator/reconcile'),
    import('viem/accounts'),
    import('./demo-client.js'),
    import('./network.js'),
  ]);

const step = (n: number, text: string) => console.log(`\n[${n}] ${text}`);
const show = (text: string) => console.log(`    ${text}`);

let network: NetworkInfo;
let own: { running: RunningNetwork; dir: string } | undefined;
if (values.network) {
  network = JSON.parse(await readFile(values.network, 'utf8')) as NetworkInfo;
} else {
  const dir = await mkdtemp(path.join(tmpdir(), 'gpumesh-demo-'));
  console.log(`starting a local network in ${dir} …`);
  const running = await startNetwork({ dataDir: dir, port: 0, rpcPort: 0, nodes: 1 });
  own = { running, dir };
  network = running;
}

try {
  if (!network.devWallet) throw new Error('the network has no dev wallet (devnet only)');
  const account = privateKeyToAccount(network.devWallet.privateKey);

  step(1, `Sign in with the dev wallet ${account.address} (EIP-191 signature, no password)`);
  const client = await signIn(network, account);
  show(`JWT ${client.token.slice(0, 24)}…`);

  step(2, 'Create an inference API key');
  const { key, id } = await client.createKey('demo');
  show(`key id ${id}, secret ${key.slice(0, 7)}… (shown once)`);

  step(3, `Send ${TOPUP_USD} USDC.s to the proxy wallet and top up`);
  const proxy = await client.proxyAddress();
  const before = (await client.user()).credits;
  const hash = await client.sendStable('USDC.s', proxy, String(TOPUP_USD));
  show(`transfer ${hash} → ${proxy}`);
  const topup = await client.topup(hash, 'USDC.s', TOPUP_USD);
  show(`top-up ${topup.status}: credited $${topup.creditedUsd}, balance $${topup.balance}`);

  step(4, 'Chat through the official openai SDK (streamed)');
  const openai = client.openai(key);
  const models = await openai.models.list();
  show(`models: ${models.data.map((m) => m.id).join(', ')}`);
  const stream = await openai.chat.completions.create({
    model: network.models.chat,
    // A question in npm start's model's closed world (models/mini-chat): it answers this one.
    messages: [{ role: 'user', content: 'How many minutes are in 3 hours?' }],
    temperature: 0,
    max_tokens: 64,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: { prompt_tokens: number; completion_tokens: number; cost?: number } | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage as typeof usage;
  }
  show(`reply: ${JSON.stringify(text)}`);
  if (!usage) throw new Error('the stream carried no usage');
  show(
    `usage: ${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens, cost $${usage.cost}`,
  );

  step(5, 'Usage summary and the new balance');
  const summary = (await client.usage()) as { totals?: { requests?: number; cost?: number } };
  show(`usage totals: ${JSON.stringify(summary.totals ?? summary)}`);
  const after = (await client.user()).credits;
  // From step 3's balance (after the top-up), so the two steps' figures follow on: the difference is the chat.
  show(`balance $${topup.balance} → $${after.balance} (the chat's cost), spend $${after.spend}`);
  if (!(after.spend > before.spend)) throw new Error('the chat was not billed');

  step(6, `Stake ${STAKE_TOKENS} ${network.nativeSymbol} from the proxy wallet`);
  await client.sendNative(proxy, String(STAKE_TOKENS + 1)); // the stake plus gas
  const amount = `${STAKE_TOKENS}.0000 ${network.nativeSymbol}`;
  const staked = await client.tx<{
    txId: string;
    stake: { quantity: string; tier: string; claimable: string };
  }>('chain_stake', [account.address, amount]);
  show(`stake tx ${staked.txId}: quantity ${staked.stake.quantity}, tier ${staked.stake.tier}`);

  step(7, 'Read the stake from the staking pool and claim the rewards accrued so far');
  await new Promise((r) => setTimeout(r, 2_000));
  const { stake, pool } = await client.tx<{
    stake: { claimable: string };
    pool: { address: string; account: string };
  }>('chain_getStake', [account.address]);
  show(`claimable ${stake.claimable}; position of ${pool.account} in the staking pool ${pool.address}`);
  try {
    const claim = await client.tx<{ txId: string; claimed: string }>('chain_claim', [account.address]);
    show(`claim tx ${claim.txId}: claimed ${claim.claimed}`);
  } catch (error) {
    // Seconds of a small stake accrue less than 0.0001: refused, nothing sent, the rewards stay accrued.
    if (!(error instanceof ApiResponseError && error.code === 'nothing_to_claim')) throw error;
    show(`claim: ${error.message} (nothing sent; the rewards keep accruing in the pool)`);
  }

  step(8, 'Reconcile the books: ledger balances = Σ entries, every credit backed by tokens on chain');
  const dataDir = network.dataDir ?? (values.network ? path.dirname(path.resolve(values.network)) : own?.dir);
  const code = await reconcileCommand(['--data-dir', dataDir!], process.env, show, {
    chain: {
      rpcUrl: network.rpcUrl,
      tokens: network.tokens,
      ...(network.stakingVault ? { stakingVault: network.stakingVault } : {}),
      ...(network.stakingPool ? { stakingPool: network.stakingPool } : {}),
    },
  });
  if (code !== 0) throw new Error('the reconciliation check found differences');

  console.log('\ndemo: every step passed.');
} finally {
  if (own) {
    await own.running.stop();
    await rm(own.dir, { recursive: true, force: true });
  }
}
