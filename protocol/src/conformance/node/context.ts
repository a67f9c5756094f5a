import type { FrameSocket } from '../frame-socket.js';

/** Settings of a node conformance run (the kit plays the coordinator). */
export type NodeKitSettings = {
  /** heartbeatIntervalMs granted in welcome (short, so timing scenarios take a second). */
  heartbeatIntervalMs: number;
  /** maxFrameBytes granted in welcome. */
  maxFrameBytes: number;
  /** How long the kit waits for each expected frame. */
  stepTimeoutMs: number;
  /** timeoutMs of the kit's jobs, and how long it waits for them to end. */
  jobTimeoutMs: number;
  /** max_tokens of the long streamed job the cancel scenario cancels. */
  cancelMaxTokens: number;
};

export type NodeScenarioContext = {
  socket: FrameSocket;
  settings: NodeKitSettings;
};

/** One node scenario: it receives a fresh session from the node under test. */
export type NodeScenario = {
  name: string;
  description: string;
  /** Scenarios that must pass first; when one fails this one is skipped. */
  needs: readonly string[];
  run(context: NodeScenarioContext): Promise<void>;
};
