import WebSocket from 'ws';
import { DEFAULT_MAX_FRAME_BYTES } from '../../constants.js';
import { ConformanceFailure } from '../failure.js';
import { FrameSocket } from '../frame-socket.js';
import type { ConformanceReport, ScenarioResult } from '../report.js';
import { runScenarios } from '../run-scenarios.js';
import type { CoordinatorKitSettings, CoordinatorScenarioContext, TriggerInference } from './context.js';
import { COORDINATOR_SCENARIOS } from './coordinator-scenarios.js';

export type CoordinatorConformanceOptions = {
  /** The coordinator's WebSocket URL for nodes, e.g. ws://127.0.0.1:8080/node. */
  url: string;
  /** Makes the coordinator send a job to the kit's node (see TriggerInference); without it `jobs` is skipped. */
  trigger?: TriggerInference;
  stepTimeoutMs?: number;
  jobTimeoutMs?: number;
  chatModel?: string;
  embeddingModel?: string;
  /** Only these scenarios (by name), in the kit's order. */
  scenarios?: readonly string[];
  /** Called after each scenario (progress output). */
  onResult?: (result: ScenarioResult) => void;
};

export const DEFAULT_KIT_CHAT_MODEL = 'gpumesh-conformance-chat';
export const DEFAULT_KIT_EMBEDDING_MODEL = 'gpumesh-conformance-embed';

/**
 * Plays a node against a coordinator under test: every scenario opens its own sessions with a fresh
 * node key. Never throws for the coordinator's behaviour; the report says what failed.
 */
export async function runCoordinatorConformance(
  options: CoordinatorConformanceOptions,
): Promise<ConformanceReport> {
  const settings: CoordinatorKitSettings = {
    url: options.url,
    stepTimeoutMs: options.stepTimeoutMs ?? 5_000,
    jobTimeoutMs: options.jobTimeoutMs ?? 30_000,
    chatModel: options.chatModel ?? DEFAULT_KIT_CHAT_MODEL,
    embeddingModel: options.embeddingModel ?? DEFAULT_KIT_EMBEDDING_MODEL,
    ...(options.trigger ? { trigger: options.trigger } : {}),
  };
  const scenarios = options.scenarios
    ? COORDINATOR_SCENARIOS.filter((s) => options.scenarios?.includes(s.name))
    : COORDINATOR_SCENARIOS;

  type Context = CoordinatorScenarioContext & { sockets: FrameSocket[] };
  const open = async (): Promise<Context> => {
    const sockets: FrameSocket[] = [];
    const connect = async () => {
      const ws = new WebSocket(settings.url, { maxPayload: DEFAULT_MAX_FRAME_BYTES * 2 });
      const socket = new FrameSocket(ws, { maxBytes: DEFAULT_MAX_FRAME_BYTES });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('close', (code) =>
          reject(new ConformanceFailure(`could not connect to ${settings.url} (${code})`)),
        );
        ws.once('error', (error) =>
          reject(new ConformanceFailure(`could not connect to ${settings.url}: ${error.message}`)),
        );
      });
      return socket;
    };
    return { settings, connect, sockets };
  };

  const results = await runScenarios<Context>(
    scenarios,
    open,
    async (context) => {
      await Promise.all(context.sockets.map((socket) => socket.end('conformance scenario over')));
    },
    options.onResult,
  );
  return { target: 'coordinator', ok: results.every((r) => r.status !== 'fail'), results };
}
