import type { Manifest, PrefixCache, Scope } from '@gpumesh/protocol';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { DEFAULT_CHUNK_FLUSH_MS } from './chunk-flush.js';
import type { HubJobRunner } from './run-hub-job.js';

/** Where the connection is. Only `online` and `draining` sessions are admitted ones. */
export const HUB_STATES = ['idle', 'connecting', 'handshake', 'online', 'draining', 'stopped'] as const;
export type HubState = (typeof HUB_STATES)[number];

export type HubLogger = {
  info(message: string, fields?: object): void;
  warn(message: string, fields?: object): void;
};

export type HubClientOptions = {
  /**
   * The hub's ws/wss URL, or several (one per coordinator replica): each reconnect tries the next,
   * so a node whose replica died moves to another.
   */
  url: string | readonly string[];
  account: PrivateKeyAccount;
  role: 'gpu' | 'cpu' | 'network';
  /** The owner wallet's proof for `auth.owner`. */
  owner?: { address: `0x${string}`; signature: `0x${string}` };
  /** The manifest for the scopes the tier allows (called after each welcome). */
  manifest: (allowedScopes: readonly Scope[]) => Manifest;
  /**
   * The prefix keys the node holds in KV now, sent with every `ping` and `presence` (v0.5,
   * NODE_PROTOCOL.md §9 "Prefix cache"); absent: the node claims no cache and sends none.
   */
  prefixCache?: () => PrefixCache;
  /** Jobs this node runs at once; at this many it reports busy. */
  capacity: number;
  /** Runs one job; rejects with a NodeError. `tokens`: completion tokens the chunk carries, if known. */
  runJob: HubJobRunner;
  /**
   * Longest streamed text waits to share a chunk frame with later tokens (default
   * {@link DEFAULT_CHUNK_FLUSH_MS}); 0: one frame per chunk the runtime emits.
   */
  chunkFlushMs?: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  log?: HubLogger;
  /** Jitter source (tests pass a fixed one). */
  random?: () => number;
  /**
   * The coordinator refused this node for good (auth_failed: a bad owner proof, say): the client
   * stops reconnecting, and this gets the reason.
   */
  onRefused?: (reason: string) => void;
};
