/**
 * `npm run devnet`: starts the local chain (anvil, chain 800000, 150 gwei, berlin, 0.5 s blocks),
 * deploys USD.s/USDT.s/USDC.s, funds the dev accounts, writes <data dir>/devnet.json, and runs until
 * SIGINT (exit 130) or SIGTERM (exit 143).
 * Flags: --port N (default 8545), --data-dir DIR (default ./.gpumesh), --native-symbol SYM.
 */
import { parseArgs } from 'node:util';
import { DEVNET_FILE_NAME, startDevnet } from '../src/chain/devnet.js';
import { DEFAULT_NATIVE_SYMBOL } from '../src/config-schema.js';

const DEFAULT_DEVNET_PORT = 8545;
const DEFAULT_DATA_DIR = './.gpumesh';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: String(DEFAULT_DEVNET_PORT) },
      'data-dir': { type: 'string', default: process.env.GPUMESH_DATA_DIR ?? DEFAULT_DATA_DIR },
      'native-symbol': {
        type: 'string',
        default: process.env.GPUMESH_NATIVE_SYMBOL ?? DEFAULT_NATIVE_SYMBOL,
      },
    },
  });
  const devnet = await startDevnet({
    port: Number(values.port),
    dataDir: values['data-dir'],
    nativeSymbol: values['native-symbol'],
    env: process.env,
  });
  console.log(`devnet: ${devnet.rpcUrl} (chain ${devnet.chainId}, native ${devnet.nativeSymbol})`);
  for (const [symbol, address] of Object.entries(devnet.tokens))
    console.log(`  ${symbol.padEnd(7)} ${address}`);
  console.log(`  staking vault ${devnet.vaults.staking.address}`);
  console.log(`  rewards vault ${devnet.vaults.rewards.address}`);
  console.log(`  dev accounts  ${devnet.accounts.map((a) => a.address).join(', ')}`);
  console.log(`  addresses written to ${values['data-dir']}/${DEVNET_FILE_NAME}`);
  const shutdown = (code: number) => () => {
    void devnet.stop().then(() => process.exit(code));
  };
  process.once('SIGINT', shutdown(130));
  process.once('SIGTERM', shutdown(143));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
