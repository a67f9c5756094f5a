import type { PrefixCache } from '@gpumesh/protocol';

/** Job kinds, as the protocol's `job.kind` names them. */
export type JobKind =
  | 'chat'
  | 'completion'
  | 'embedding'
  | 'verify'
  | 'vision'
  | 'transcription'
  | 'translation'
  | 'speech';

/** Model families a node offers a model as (the protocol's `ModelOffer.family`). */
export type ModelFamily = 'chat' | 'text' | 'embedding' | 'vision' | 'voice';

/** Voice jobs a voice model serves (the protocol's `ModelOffer.kinds`). */
export type VoiceKind = 'transcription' | 'translation' | 'speech';

/** A model a runtime serves, as the manifest will offer it. */
export type ServedModel = {
  id: string;
  family: ModelFamily;
  /** Tokens of prompt plus completion one request may use. */
  contextLength: number;
  /** Jobs this model runs at once. */
  maxConcurrency: number;
  /** SHA-256 of the weights file served (local files only): the manifest's model identity. */
  sha256?: string;
  /** Voice models: the voice jobs served. */
  kinds?: VoiceKind[];
  /** Chat and text models: jobs may carry `continueFrom` (NODE_PROTOCOL.md §9 "Continuing an answer"). */
  continues?: boolean;
  /**
   * Chat models whose runtime keeps recent conversations' KV state and reports `cached_tokens`
   * (NODE_PROTOCOL.md §9 "Prefix cache"): the offer carries the cached input price.
   */
  cachesPrefixes?: boolean;
};

export type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Transcription and translation: seconds of audio in (the billed unit). */
  seconds?: number;
  /** Speech: characters of text in (the billed unit). */
  characters?: number;
  /** Chat and completion: the prompt tokens the runtime's KV cache held (not evaluated again). */
  prompt_tokens_details?: { cached_tokens?: number } | null;
};

/** An OpenAI JSON object (request, response or stream chunk). */
export type JsonObject = Record<string, unknown>;

/** The full OpenAI response of a job, with usage. */
export type JobResponse = JsonObject & { usage: Usage };

/** One inference job for a runtime. */
export type RuntimeJob = {
  kind: JobKind;
  model: string;
  /** The OpenAI request body (chat.completions, completions or embeddings). */
  request: JsonObject;
  /** When true, `onChunk` receives OpenAI stream chunks as tokens are generated. */
  stream: boolean;
  /**
   * `tokens`: the completion tokens the chunk carries, when the runtime counts them (then a job's
   * counts add up to its completion_tokens); `tokenIds`: their ids, when the runtime knows them
   * (what a continuation of the answer starts from, NODE_PROTOCOL.md §9).
   */
  onChunk?: (chunk: JsonObject, tokens?: number, tokenIds?: number[]) => void;
  /** Aborting stops generation; the job then rejects with `job_cancelled`. */
  signal?: AbortSignal;
  /**
   * Called once the prompt is tokenized, before it is evaluated, with its token count: what the
   * job's error frame reports if it ends early (a client who leaves still pays the prompt).
   */
  onPromptTokens?: (count: number) => void;
  /** Chat and completion: the token ids evaluated and sampled, for the result's `tokenIds`. */
  onTokenIds?: (ids: TokenIds) => void;
  /**
   * Chat and completion, for a model offered with `continues`: the answer so far, which the job
   * continues rather than begins; the response carries only the new text.
   */
  continueFrom?: { text: string; tokenIds?: number[] };
};

/** A job's prompt and completion token ids (protocol result frame `tokenIds`). */
export type TokenIds = { prompt: number[]; completion: number[] };

/** Progress while models load: `loaded` of `total` models, and the current model's share done. */
export type LoadProgress = { model: string; loaded: number; total: number; fraction: number };

/**
 * An inference runtime: node-llama-cpp in process, or an OpenAI-compatible server the node relays
 * to. The daemon only talks to this interface.
 */
export type Runtime = {
  /** Name and version, as the manifest's `runtimes` lists them. */
  readonly info: { name: string; version: string };
  /** Loads models (or lists a server's models); call once before `run`. */
  load(onProgress?: (progress: LoadProgress) => void): Promise<void>;
  /** The models served, after `load`. */
  models(): ServedModel[];
  /** Runs one job; rejects with a NodeError. */
  run(job: RuntimeJob): Promise<JobResponse>;
  /**
   * The prefix keys of the conversations the runtime holds in KV now, per model, most recent first
   * (`ping`/`presence` `prefixCache`, NODE_PROTOCOL.md §9 "Prefix cache"). Absent: the runtime
   * claims no cache.
   */
  prefixCache?(): PrefixCache;
  /** False once the runtime has failed or closed. */
  alive(): boolean;
  close(): Promise<void>;
};
