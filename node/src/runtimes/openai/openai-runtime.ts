import { NodeError, toNodeError } from '../../errors.js';
import { chatResponse, completionResponse, type FinishReason, relayedUsage } from '../openai-shapes.js';
import type {
  JobKind,
  JobResponse,
  JsonObject,
  LoadProgress,
  ModelFamily,
  Runtime,
  RuntimeJob,
  ServedModel,
  Usage,
  VoiceKind,
} from '../runtime.js';
import { relaySpeech, relayTranscription } from './relay-audio.js';

/** A model of the local server to offer, and under which id. */
export type RelayedModel = {
  /** The id jobs name. */
  id: string;
  /** The server's own name for it (default: `id`). */
  upstream?: string;
  family?: ModelFamily;
  /** Voice models: the voice jobs the server does for it (`/audio/transcriptions`, `/audio/translations`, `/audio/speech`). */
  kinds?: VoiceKind[];
  contextLength?: number;
  maxConcurrency?: number;
};

export type OpenAiRuntimeOptions = {
  /** The server's OpenAI base URL, e.g. `http://127.0.0.1:8000/v1` (vLLM) or `http://127.0.0.1:11434/v1` (Ollama). */
  baseUrl: string;
  /** Sent as a Bearer token when the server wants one. */
  apiKey?: string;
  /** Which models to offer; default: every model the server lists. */
  models?: RelayedModel[];
  /** Runtime name in the manifest (`vllm`, `ollama`, `llama.cpp-server`, …). */
  name?: string;
};

export const DEFAULT_RELAY_CONTEXT_TOKENS = 4096;
export const DEFAULT_RELAY_CONCURRENCY = 4;
const PATHS: Record<Exclude<JobKind, 'verify'>, string> = {
  chat: '/chat/completions',
  completion: '/completions',
  embedding: '/embeddings',
  vision: '/chat/completions',
  transcription: '/audio/transcriptions',
  translation: '/audio/translations',
  speech: '/audio/speech',
};
const KINDS_BY_FAMILY: Record<ModelFamily, JobKind[]> = {
  chat: ['chat', 'completion'],
  text: ['completion'],
  embedding: ['embedding'],
  vision: ['chat', 'vision'],
  voice: [], // a voice model's `kinds`
};

/**
 * Relays jobs to an OpenAI-compatible inference server on this machine (vLLM, Ollama, llama.cpp
 * server, LM Studio): streams its SSE chunks through as they arrive, and reports its models. The
 * server's own usage is passed on (streams ask for it with `stream_options.include_usage`); a server
 * that reports none fails the job rather than bill a guess.
 */
export function createOpenAiRuntime(options: OpenAiRuntimeOptions): Runtime {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const offers = new Map<string, { offer: ServedModel; upstream: string }>();
  let alive = false;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  async function call(path: string, init: RequestInit, form = false): Promise<Response> {
    let response: Response;
    try {
      // A multipart body sets its own content type (with the boundary).
      const { 'content-type': _json, ...formHeaders } = headers;
      response = await fetch(`${baseUrl}${path}`, { ...init, headers: form ? formHeaders : headers });
    } catch (error) {
      if ((init.signal as AbortSignal | undefined)?.aborted) throw new NodeError('job_cancelled');
      alive = false;
      throw new NodeError('runtime_unreachable', { detail: baseUrl, cause: error });
    }
    alive = true;
    if (response.ok) return response;
    const body = await response.text().catch(() => '');
    const code =
      response.status === 404
        ? 'model_not_found'
        : response.status < 500
          ? 'invalid_request'
          : 'runtime_error';
    throw new NodeError(code, {
      detail: `The local server answered ${response.status}.`,
      cause: new Error(body),
    });
  }

  async function relayStream(job: RuntimeJob, response: Response): Promise<JobResponse> {
    let content = '';
    let finishReason: FinishReason = 'stop';
    let usage: Usage | undefined;
    let meta = { id: '', created: 0, model: job.model };
    for await (const event of serverSentEvents(response, job.signal)) {
      if (event === '[DONE]') break;
      const chunk = JSON.parse(event) as JsonObject & { choices?: JsonObject[]; usage?: Usage | null };
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      meta = { id: String(chunk.id ?? ''), created: Number(chunk.created ?? 0), model: job.model };
      const delta = choice.delta as { content?: string | null } | undefined;
      content += (job.kind !== 'completion' ? delta?.content : (choice.text as string | undefined)) ?? '';
      if (choice.finish_reason) finishReason = choice.finish_reason as FinishReason;
      job.onChunk?.({ ...chunk, model: job.model });
    }
    if (job.signal?.aborted) throw new NodeError('job_cancelled');
    if (!usage) throw new NodeError('runtime_error', { detail: 'The local server reported no usage.' });
    return job.kind !== 'completion'
      ? chatResponse(meta, [{ text: content, finishReason }], relayedUsage(usage))
      : completionResponse(meta, [{ text: content, finishReason }], relayedUsage(usage));
  }

  return {
    info: { name: options.name ?? 'openai-compatible', version: 'unknown' },

    async load(onProgress?: (progress: LoadProgress) => void) {
      const response = await call('/models', { method: 'GET' });
      const listed =
        ((await response.json()) as { data?: { id: string; max_model_len?: number }[] }).data ?? [];
      const wanted: RelayedModel[] =
        options.models ??
        listed.map((model) => ({
          id: model.id,
          family: /embed/i.test(model.id) ? ('embedding' as const) : ('chat' as const),
          contextLength: model.max_model_len,
        }));
      for (const [index, model] of wanted.entries()) {
        const upstream = model.upstream ?? model.id;
        if (!listed.some((m) => m.id === upstream)) {
          throw new NodeError('model_load_failed', { detail: `${baseUrl} does not list ${upstream}.` });
        }
        offers.set(model.id, {
          upstream,
          offer: {
            id: model.id,
            family: model.family ?? 'chat',
            contextLength:
              model.contextLength ??
              listed.find((m) => m.id === upstream)?.max_model_len ??
              DEFAULT_RELAY_CONTEXT_TOKENS,
            maxConcurrency: model.maxConcurrency ?? DEFAULT_RELAY_CONCURRENCY,
            ...(model.kinds ? { kinds: model.kinds } : {}),
          },
        });
        onProgress?.({ model: model.id, loaded: index + 1, total: wanted.length, fraction: 1 });
      }
    },

    models: () => [...offers.values()].map((entry) => entry.offer),

    async run(job) {
      const served = offers.get(job.model);
      if (!served || job.kind === 'verify') {
        throw new NodeError('model_not_found', { detail: `${job.model} (${job.kind})` });
      }
      const kinds: readonly JobKind[] =
        served.offer.family === 'voice' ? (served.offer.kinds ?? []) : KINDS_BY_FAMILY[served.offer.family];
      // A kind the model's family does not take is the request's fault (NODE_PROTOCOL.md §9 "Odd jobs").
      if (!kinds.includes(job.kind)) {
        throw new NodeError('invalid_request', { detail: `${job.model} takes no ${job.kind} jobs` });
      }
      if (job.kind === 'transcription' || job.kind === 'translation') {
        return relayTranscription(job, served.upstream, (body) =>
          call(PATHS[job.kind as 'transcription'], { method: 'POST', body, signal: job.signal }, true),
        );
      }
      if (job.kind === 'speech') {
        return relaySpeech(job, served.upstream, (body) =>
          call(PATHS.speech, { method: 'POST', body, signal: job.signal }),
        );
      }
      const stream = job.stream && job.kind !== 'embedding';
      const body: JsonObject = { ...job.request, model: served.upstream, stream };
      if (stream) body.stream_options = { include_usage: true };
      else delete body.stream_options;
      try {
        const response = await call(PATHS[job.kind], {
          method: 'POST',
          body: JSON.stringify(body),
          signal: job.signal,
        });
        if (stream) return await relayStream(job, response);
        const result = (await response.json()) as JobResponse;
        if (!result.usage)
          throw new NodeError('runtime_error', { detail: 'The local server reported no usage.' });
        return { ...result, model: job.model, usage: relayedUsage(result.usage) };
      } catch (error) {
        if (job.signal?.aborted) throw new NodeError('job_cancelled');
        throw toNodeError(error, 'runtime_error');
      }
    },

    alive: () => alive,

    async close() {
      alive = false;
    },
  };
}

/** The `data:` payloads of a text/event-stream body, one per event. */
async function* serverSentEvents(response: Response, signal?: AbortSignal): AsyncGenerator<string> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (signal?.aborted) return;
    buffer += decoder.decode(bytes, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data) yield data;
    }
  }
}
