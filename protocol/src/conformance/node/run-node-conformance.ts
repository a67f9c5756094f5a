import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { DEFAULT_MAX_FRAME_BYTES, MIN_MAX_FRAME_BYTES } from '../../constants.js';
import { ConformanceFailure } from '../failure.js';
import { FrameSocket } from '../frame-socket.js';
import type { ConformanceReport, ScenarioResult } from '../report.js';
import { runScenarios } from '../run-scenarios.js';
import type { NodeKitSettings, NodeScenarioContext } from './context.js';
import { NODE_SCENARIOS } from './node-scenarios.js';

export type NodeConformanceOptions = Partial<NodeKitSettings> & {
  /** Port to listen on (0: any free port; see onListening). Ignored when `server` is given. */
  port?: number;
  /** Host to listen on (default 127.0.0.1). */
  host?: string;
  /** An HTTP server to attach to instead of listening (left open afterwards). */
  server?: Server;
  /** Only these scenarios (by name), in the kit's order. */
  scenarios?: readonly string[];
  /** How long to wait for the node to open each session (it reconnects after every scenario). */
  connectTimeoutMs?: number;
  /** Called once the kit listens, with the WebSocket URL the node must connect to. */
  onListening?: (url: string) => void | Promise<void>;
  /** Called after each scenario (progress output). */
  onResult?: (result: ScenarioResult) => void;
};

export const DEFAULT_KIT_HEARTBEAT_INTERVAL_MS = 200;
export const DEFAULT_KIT_STEP_TIMEOUT_MS = 5_000;
export const DEFAULT_KIT_JOB_TIMEOUT_MS = 30_000;
export const DEFAULT_KIT_CONNECT_TIMEOUT_MS = 15_000;
export const DEFAULT_KIT_CANCEL_MAX_TOKENS = 256;

/**
 * Plays the coordinator against a node under test: listens, and runs every node scenario on a fresh
 * session the node opens (a conforming node reconnects after each close). Never throws for the
 * node's behaviour; the report says what failed.
 */
export async function runNodeConformance(options: NodeConformanceOptions = {}): Promise<ConformanceReport> {
  const settings: NodeKitSettings = {
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? DEFAULT_KIT_HEARTBEAT_INTERVAL_MS,
    maxFrameBytes: options.maxFrameBytes ?? MIN_MAX_FRAME_BYTES,
    stepTimeoutMs: options.stepTimeoutMs ?? DEFAULT_KIT_STEP_TIMEOUT_MS,
    jobTimeoutMs: options.jobTimeoutMs ?? DEFAULT_KIT_JOB_TIMEOUT_MS,
    cancelMaxTokens: options.cancelMaxTokens ?? DEFAULT_KIT_CANCEL_MAX_TOKENS,
  };
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_KIT_CONNECT_TIMEOUT_MS;
  const scenarios = options.scenarios
    ? NODE_SCENARIOS.filter((s) => options.scenarios?.includes(s.name))
    : NODE_SCENARIOS;

  // Accept more than maxFrameBytes at the socket so an oversized frame from the node is reported, not dropped.
  const wss = options.server
    ? new WebSocketServer({ server: options.server, maxPayload: DEFAULT_MAX_FRAME_BYTES })
    : new WebSocketServer({
        port: options.port ?? 0,
        host: options.host ?? '127.0.0.1',
        maxPayload: DEFAULT_MAX_FRAME_BYTES,
      });
  const waiting: FrameSocket[] = [];
  let arrived: (() => void) | undefined;
  wss.on('connection', (ws) => {
    waiting.push(new FrameSocket(ws, { maxBytes: settings.maxFrameBytes }));
    arrived?.();
  });

  try {
    if (!options.server) await once(wss, 'listening');
    const { address, port } = (options.server ?? wss).address() as AddressInfo;
    await options.onListening?.(`ws://${address.includes(':') ? `[${address}]` : address}:${port}`);

    const nextSession = async (): Promise<FrameSocket> => {
      const deadline = Date.now() + connectTimeoutMs;
      for (;;) {
        const socket = waiting.shift();
        if (socket && !socket.closed) return socket;
        if (socket) continue;
        const left = deadline - Date.now();
        if (left <= 0) throw new ConformanceFailure(`the node did not connect within ${connectTimeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          arrived = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        arrived = undefined;
      }
    };

    const results = await runScenarios<NodeScenarioContext>(
      scenarios,
      async () => ({ socket: await nextSession(), settings }),
      (context) => context.socket.end('conformance scenario over'),
      options.onResult,
    );
    return { target: 'node', ok: results.every((r) => r.status !== 'fail'), results };
  } finally {
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  }
}
