import type { Devnet } from '@gpumesh/coordinator/devnet';
import { privateKeyToAccount } from 'viem/accounts';
import { signIn } from './demo-client.js';
import type { NetworkInfo } from './network.js';

/** The dev wallet tops itself up to this many USD of credits on start. */
const DEV_CREDIT_TARGET_USD = 10;
/** The dev wallet's stake: silver (1,000), so its nodes take the jobs their cores can. */
const DEV_STAKE_TOKENS = 1_000;

/**
 * The devnet's dev wallet on the network `info` describes: signed in, an API key (the one of an
 * earlier start, `previousApiKey`, if any), credits topped up to DEV_CREDIT_TARGET_USD, and a stake
 * that makes it a silver owner, so the nodes it owns get a real node's concurrency (an unstaked one
 * takes 1). Sets `info.devWallet` and `info.apiKey`.
 */
export async function setUpDevWallet(
  info: NetworkInfo,
  devnet: Devnet,
  previousApiKey: string | undefined,
  log: (line: string) => void,
): Promise<void> {
  const dev = devnet.accounts[0]!;
  info.devWallet = { address: dev.address, privateKey: dev.privateKey };
  const client = await signIn(info, privateKeyToAccount(dev.privateKey));
  info.apiKey = previousApiKey ?? (await client.createKey('npm-start')).key;
  const { credits } = await client.user();
  if (credits.balance < DEV_CREDIT_TARGET_USD / 2) {
    const hash = await client.sendStable(
      'USDC.s',
      await client.proxyAddress(),
      String(DEV_CREDIT_TARGET_USD),
    );
    await client.topup(hash, 'USDC.s', DEV_CREDIT_TARGET_USD);
  }
  const { stake } = await client.tx<{ stake: { quantity: string } }>('chain_getStake', [dev.address]);
  if (Number.parseFloat(stake.quantity) < DEV_STAKE_TOKENS) {
    await client.sendNative(await client.proxyAddress(), String(DEV_STAKE_TOKENS + 1)); // plus gas
    await client.tx('chain_stake', [dev.address, `${DEV_STAKE_TOKENS}.0000 ${info.nativeSymbol}`]);
  }
  log(`owner     ${dev.address} (dev wallet, staked ${DEV_STAKE_TOKENS} ${info.nativeSymbol})`);
}
