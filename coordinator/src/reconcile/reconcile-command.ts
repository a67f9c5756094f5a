import { createChainServices } from '../chain/create-chain-services.js';
import { loadConfig } from '../config.js';
import { migrate } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { staleHoldAgeMs } from '../ledger/stale-holds.js';
import { type ReconcileDifference, reconcile } from './reconcile.js';

/**
 * `gpumesh-coordinator reconcile [--json] [config flags]`: runs the reconciliation check against the
 * store and chain the configuration names (the same flags and environment as the server), prints
 * the differences, and returns the exit code: 0 when there is none, 1 when there is any.
 */
export async function reconcileCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  out: (line: string) => void,
  /** Configuration set in code (the local network's launcher and demo); wins over flags. */
  overrides?: Record<string, unknown>,
): Promise<number> {
  const config = loadConfig({ argv, env, ...(overrides ? { overrides } : {}) });
  const store = openStore(config);
  const { db } = store;
  try {
    await migrate(db);
    const report = await reconcile({
      db,
      services: createChainServices(config),
      staleHoldMs: staleHoldAgeMs(config.router),
      now: Date.now(),
    });
    if (argv.includes('--json')) {
      out(JSON.stringify(report));
    } else {
      const { accounts, openHolds, wallets, tokens, payouts } = report.checked;
      out(
        `checked ${accounts} ledger accounts, ${openHolds} open holds, ${wallets} proxy wallets × ${tokens} tokens, ${payouts} payouts`,
      );
      for (const difference of report.differences) out(describe(difference));
      out(report.differences.length === 0 ? 'no differences' : `${report.differences.length} differences`);
    }
    return report.differences.length === 0 ? 0 : 1;
  } finally {
    await store.close();
  }
}

function describe(d: ReconcileDifference): string {
  switch (d.check) {
    case 'ledger_balance':
      return `ledger_balance ${d.account}: balance ${d.balance} ≠ Σ entries ${d.sumOfEntries} (nanousd)`;
    case 'transfer_net':
      return `transfer_net ${d.kind}: entries net ${d.net}, not 0 (nanousd)`;
    case 'ledger_reserved':
      return `ledger_reserved ${d.account}: reserved ${d.reserved} ≠ Σ open holds ${d.sumOfHolds} (nanousd)`;
    case 'stale_hold':
      return `stale_hold ${d.reservation} of ${d.account}: ${d.amount} nanousd held for ${d.ageMs} ms`;
    case 'wallet_backing':
      return `wallet_backing ${d.wallet} (user ${d.user}) ${d.token}: ${d.onChain} on chain < ${d.credited} credited`;
    case 'vault_backing':
      return `vault_backing ${d.wallet}: ${d.onChain} wei on chain < ${d.staked} wei staked or unbonding`;
    case 'pool_backing':
      return `pool_backing ${d.pool}: balance ${d.balance} wei ≠ staked + unbonding + rewards pool ${d.owed} wei`;
    case 'pool_position':
      return `pool_position ${d.account} (user ${d.user}): pool staked ${d.onChain.staked}, unbonding ${d.onChain.unbonding} ≠ ledger ${d.ledger.staked}, ${d.ledger.unbonding} (wei)`;
    case 'pool_totals':
      return `pool_totals ${d.what}: the ledger's ${d.ledger} wei > the pool's ${d.onChain} wei`;
    case 'payout_ledger':
      return `payout_ledger ${d.payout} (${d.status}): entries net ${d.entries}, expected ${d.expected} (nanousd)`;
    case 'payout_unsettled':
      return `payout_unsettled ${d.payout}: ${d.status} for ${d.ageMs} ms`;
    case 'payout_chain':
      return `payout_chain ${d.payout}: ${d.status} but the chain says ${d.onChain} (${d.txId ?? 'no transaction'})`;
  }
}
