import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the health endpoint reports. */
export type HealthStatus = {
  nodeId: string;
  /** True while the hub WebSocket is open and the session admitted. */
  hubConnected: boolean;
  runtimeAlive: boolean;
  presence: string;
  /** The tier the coordinator granted (null before a session), and what it means. */
  tier: string | null;
  tierSummary: string | null;
  jobsInFlight: number;
  capacity: number;
  jobsServed: number;
  tokensServed: { prompt: number; completion: number };
  /**
   * Sum of served tokens × advertised prices since this process started (the coordinator's ledger
   * is authoritative): `amount` in base units, `unit` naming them, and `usd` for USD prices.
   */
  estimatedEarnings: { currency: string; amount: string; unit: 'nanousd' | 'wei'; usd?: number };
};

export type HealthServer = { url: string; close(): Promise<void> };

/**
 * A local health endpoint (GET /health): 200 only while the hub socket is open and the runtime
 * alive, else 503, with the status as JSON either way. Bind it to 127.0.0.1: it is for the machine's
 * own supervisor, not the network.
 */
export async function startHealthServer(options: {
  host: string;
  port: number;
  status: () => HealthStatus;
}): Promise<HealthServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url !== '/health' && req.url !== '/')) {
      res.writeHead(404).end();
      return;
    }
    const status = options.status();
    const healthy = status.hubConnected && status.runtimeAlive;
    res.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ status: healthy ? 'ok' : 'unavailable', ...status }));
  });
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/health`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
