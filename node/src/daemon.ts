import { join } from 'node:path';
import type { JobFrame, Price } from '@gpumesh/protocol';
import type { Llama } from 'node-llama-cpp';
import { hubUrls, type NodeConfig } from './config.js';
import { NodeError } from './errors.js';
import { detectHardware } from './hardware/detect-hardware.js';
import type { HardwareSource } from './hardware/hardware-source.js';
import { type HealthServer, type HealthStatus, startHealthServer } from './health.js';
import { HubClient } from './hub-client.js';
import type { HubLogger } from './hub-client-options.js';
import { loadNodeIdentity } from './identity.js';
import { buildManifest, offerPrice } from './manifest.js';
import { createRuntime } from './runtimes/create-runtime.js';
import type { LoadProgress, Runtime, TokenIds } from './runtimes/runtime.js';
import { tierSummary } from './tier-summary.js';

export type StartDaemonOptions = {
  log?: HubLogger;
  onLoadProgress?: (progress: LoadProgress) => void;
  /** Replaces the configured runtime (tests and benchmarks). */
  runtime?: Runtime;
  /** With `runtime`: each model's price by id (default the configured price). */
  prices?: Record<string, NodeConfig['price']>;
  hardwareSource?: HardwareSource;
  /** Shares a loaded llama.cpp binding (tests). */
  llama?: Llama;
};

export type Daemon = {
  nodeId: string;
  hub: HubClient;
  health: HealthServer;
  runtime: Runtime;
  status(): HealthStatus;
  /**
   * Resolves with the reason when the coordinator refuses this node for good (auth_failed: a bad
   * owner proof); the node then stopped reconnecting. Never resolves otherwise.
   */
  refused: Promise<string>;
  /** Drains in-flight jobs (up to the configured timeout), goes offline, closes everything. */
  shutdown(reason?: string): Promise<void>;
};

/** The node key's file in the state folder. */
export function nodeKeyPath(config: NodeConfig): string {
  return join(config.stateDir, 'node.key');
}

/**
 * Starts the provider node: identity, hardware, runtime (models loaded), health endpoint, then the
 * hub session. Reads no environment and traps no signal: the CLI does that.
 */
export async function startDaemon(config: NodeConfig, options: StartDaemonOptions = {}): Promise<Daemon> {
  const identity = await loadNodeIdentity(nodeKeyPath(config));
  const hardware = await detectHardware(options.hardwareSource);
  const { runtime, prices } = options.runtime
    ? { runtime: options.runtime, prices: options.prices ?? {} }
    : await createRuntime(config, options.llama ? { llama: options.llama } : {});
  await runtime.load(options.onLoadProgress);
  const models = runtime.models();
  const capacity = Math.max(
    1,
    models.reduce((sum, model) => sum + model.maxConcurrency, 0),
  );

  const served = { jobs: 0, prompt: 0, completion: 0, earnings: 0n };
  const runJob = async (
    job: JobFrame,
    io: {
      signal: AbortSignal;
      onChunk: (chunk: Record<string, unknown>, tokens?: number, tokenIds?: number[]) => void;
      onPromptTokens: (count: number) => void;
      onTokenIds: (ids: TokenIds) => void;
    },
  ) => {
    // A job continues an answer only on a model offered with `continues` (NODE_PROTOCOL.md §9).
    if (job.continueFrom && !models.some((m) => m.id === job.model && m.continues)) {
      throw new NodeError('invalid_request', { detail: `${job.model} does not continue answers.` });
    }
    const response = await runtime.run({
      kind: job.kind,
      model: job.model,
      request: job.request,
      stream: job.stream,
      ...(job.continueFrom ? { continueFrom: job.continueFrom } : {}),
      ...io,
    });
    const offered = models.find((model) => model.id === job.model);
    const configured: Price = prices[job.model] ?? config.price;
    const price = offered ? offerPrice(configured, offered) : configured;
    served.jobs++;
    served.prompt += response.usage.prompt_tokens;
    served.completion += response.usage.completion_tokens;
    if (price.currency === config.price.currency) {
      const { seconds, characters } = response.usage;
      // Voice jobs earn by their units: audio to the millisecond, characters (pricing/media-units.ts).
      const voice =
        (seconds !== undefined && price.inputPerSecond !== undefined
          ? BigInt(Math.ceil(seconds * 1000)) * BigInt(price.inputPerSecond) * 1000n
          : 0n) +
        (characters !== undefined && price.inputPerMChar !== undefined
          ? BigInt(characters) * BigInt(price.inputPerMChar)
          : 0n);
      // Cached prompt tokens at the cached price (the coordinator may bill fewer of them so: an estimate).
      const cached = BigInt(response.usage.prompt_tokens_details?.cached_tokens ?? 0);
      served.earnings +=
        ((BigInt(response.usage.prompt_tokens) - cached) * BigInt(price.inputPerMTok) +
          cached * BigInt(price.cachedInputPerMTok ?? price.inputPerMTok) +
          BigInt(response.usage.completion_tokens) * BigInt(price.outputPerMTok) +
          voice) /
        1_000_000n;
    }
    return response;
  };

  const owner =
    config.ownerAddress && config.ownerSignature
      ? { address: config.ownerAddress as `0x${string}`, signature: config.ownerSignature as `0x${string}` }
      : undefined;
  let onRefused: (reason: string) => void = () => {};
  const refused = new Promise<string>((resolve) => {
    onRefused = resolve;
  });
  const hub = new HubClient({
    onRefused: (reason) => onRefused(reason),
    url: hubUrls(config.coordinator),
    account: identity.account,
    role: config.role,
    ...(owner ? { owner } : {}),
    capacity,
    runJob,
    // A runtime that keeps conversations' KV state for a chat model says what it holds (v0.5).
    ...(runtime.prefixCache && models.some((model) => model.cachesPrefixes)
      ? { prefixCache: runtime.prefixCache.bind(runtime) }
      : {}),
    manifest: (allowedScopes) =>
      buildManifest({
        nodeId: identity.nodeId,
        role: config.role,
        hardware,
        runtime: runtime.info,
        models,
        prices,
        defaultPrice: config.price,
        allowedScopes,
        ...(owner ? { owner: owner.address } : {}),
      }),
    reconnectMinMs: config.reconnectMinMs,
    reconnectMaxMs: config.reconnectMaxMs,
    chunkFlushMs: config.chunkFlushMs,
    ...(options.log ? { log: options.log } : {}),
  });

  const status = (): HealthStatus => ({
    nodeId: identity.nodeId,
    hubConnected: hub.connected,
    runtimeAlive: runtime.alive(),
    presence: hub.presence,
    tier: hub.tier ?? null,
    tierSummary: hub.tier ? tierSummary(hub.tier) : null,
    jobsInFlight: hub.inFlight,
    capacity,
    jobsServed: served.jobs,
    tokensServed: { prompt: served.prompt, completion: served.completion },
    estimatedEarnings:
      config.price.currency === 'USD'
        ? {
            currency: 'USD',
            amount: served.earnings.toString(),
            unit: 'nanousd',
            usd: Number(served.earnings) / 1e9,
          }
        : { currency: config.price.currency, amount: served.earnings.toString(), unit: 'wei' },
  });
  const health = await startHealthServer({ host: config.healthHost, port: config.healthPort, status });
  hub.start();

  let closing: Promise<void> | undefined;
  return {
    nodeId: identity.nodeId,
    hub,
    health,
    runtime,
    status,
    refused,
    shutdown: (reason = 'shutdown') => {
      closing ??= (async () => {
        await hub.shutdown(config.drainTimeoutMs, reason);
        await health.close();
        await runtime.close();
      })();
      return closing;
    },
  };
}
