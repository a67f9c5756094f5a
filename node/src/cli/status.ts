import type { NodeConfig } from '../config.js';
import type { CommandInput } from './parse-args.js';
import { table } from './table.js';

type NetworkFigures = {
  linked: boolean;
  jobs: number;
  earnings: { total: number; today: number; unit: 'USD' };
  uptime: { last24h: number };
};

/**
 * `gpumesh-node status`: what the running daemon's health endpoint says (health.ts), on this
 * machine, with the coordinator's figures for it; exit 1 when it is not running or not online.
 */
export async function status(config: NodeConfig, { values }: CommandInput): Promise<number> {
  const json = values.json === true;
  const host = config.healthHost.includes(':') ? `[${config.healthHost}]` : config.healthHost;
  const url = `http://${host}:${config.healthPort}/health`;
  let body: Record<string, unknown>;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    const message = `the node is not running (no answer at ${url}; --health-port names another port)`;
    if (json) console.log(JSON.stringify({ running: false, online: false, error: message }));
    else console.error(`gpumesh-node: ${message}`);
    return 1;
  }
  const online = body.hubConnected === true && body.presence === 'online';
  const network = await coordinatorFigures(config, String(body.nodeId));
  if (json) {
    console.log(JSON.stringify({ running: true, online, ...body, ...(network ? { network } : {}) }));
    return online ? 0 : 1;
  }
  const tokens = body.tokensServed as { prompt: number; completion: number } | undefined;
  const earnings = body.estimatedEarnings as
    | { currency: string; amount: string; unit: string; usd?: number }
    | undefined;
  console.log(
    table([
      ['node', String(body.nodeId)],
      ['coordinator', body.hubConnected === true ? 'connected' : 'not connected'],
      ['presence', String(body.presence)],
      ['tier', String(body.tierSummary ?? 'not admitted yet')],
      ['jobs', `${body.jobsInFlight} running of ${body.capacity}; ${body.jobsServed} served`],
      ['tokens', `${tokens?.prompt ?? 0} prompt, ${tokens?.completion ?? 0} completion`],
      [
        'earnings',
        earnings?.usd !== undefined
          ? `$${earnings.usd.toFixed(6)} since start (estimated from its prices; the coordinator's ledger is authoritative)`
          : `${earnings?.amount ?? '0'} ${earnings?.unit ?? 'wei'} since start (estimated)`,
      ],
      [
        'earned in total',
        network
          ? `$${network.earnings.total.toFixed(6)} (USD, the coordinator's ledger${network.linked ? ', credited to the owner' : ', credited to this node until it is linked'}); uptime ${(network.uptime.last24h * 100).toFixed(1)}% over 24 h (or since first seen)`
          : 'unknown (the coordinator did not answer)',
      ],
    ]),
  );
  return online ? 0 : 1;
}

/** The coordinator's public figures for this node (GET /api/network/nodes/:id), or undefined. */
async function coordinatorFigures(config: NodeConfig, nodeId: string): Promise<NetworkFigures | undefined> {
  const first = (config.coordinator.split(',')[0] ?? '').trim().replace(/^ws(s?):/, 'http$1:');
  try {
    const base = new URL(first);
    const res = await fetch(new URL(`/api/network/nodes/${nodeId}`, base.origin), {
      signal: AbortSignal.timeout(3_000),
    });
    return res.ok ? ((await res.json()) as NetworkFigures) : undefined;
  } catch {
    return undefined;
  }
}
