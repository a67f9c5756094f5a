import type { FrameSocket } from '../frame-socket.js';

/** What the kit asks the coordinator under test to run, as an API client would. */
export type InferenceRequest = {
  kind: 'chat' | 'embedding';
  model: string;
  /** The OpenAI request body (chat.completions or embeddings). */
  body: Record<string, unknown>;
};

/**
 * Makes the coordinator under test send a job to the kit's node, as a client request would (for
 * example POST /v1/chat/completions). Resolves with the client-visible response as text (the JSON
 * body, or the SSE stream); the kit looks for its own answer in it.
 */
export type TriggerInference = (request: InferenceRequest) => Promise<string>;

export type CoordinatorKitSettings = {
  /** The coordinator's WebSocket URL for nodes. */
  url: string;
  /** How long the kit waits for each expected frame. */
  stepTimeoutMs: number;
  /** How long the kit waits for a triggered job and its client response. */
  jobTimeoutMs: number;
  /** Model ids the kit's node advertises. */
  chatModel: string;
  embeddingModel: string;
  trigger?: TriggerInference;
};

export type CoordinatorScenarioContext = {
  settings: CoordinatorKitSettings;
  /** Opens a WebSocket to the coordinator (closed by the runner after the scenario). */
  connect(): Promise<FrameSocket>;
};

/** One coordinator scenario. */
export type CoordinatorScenario = {
  name: string;
  description: string;
  needs: readonly string[];
  run(context: CoordinatorScenarioContext): Promise<void>;
};
