import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS, type ErrorBody, type ErrorCode } from '../errors.js';
import { isOpenRouterRequest, toOpenRouterError } from '../openrouter-error.js';
import type { StreamSink } from '../router/types.js';
import { hijackedStream } from './hijacked-stream.js';

/**
 * A server-sent-events sink over the raw response (hijacked-stream.ts: headers with the first
 * chunk, the client going away detected).
 */
export function openSse(
  request: FastifyRequest,
  reply: FastifyReply,
  requestId: string,
): StreamSink & { readonly started: boolean } {
  const stream = hijackedStream(request, reply);
  const openRouter = isOpenRouterRequest(request);
  /**
   * OpenRouter's mid-stream error: a chunk with the error (numeric code) and a choice finished
   * with `error`, so its SDK's chunk schema reads it.
   */
  const openRouterErrorChunk = (final: { error: ErrorBody['error'] }) => ({
    id: requestId,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: String((request.body as { model?: unknown } | undefined)?.model ?? ''),
    error: toOpenRouterError(final.error, ERRORS[final.error.code as ErrorCode]?.status ?? 500),
    choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
  });
  const send = (data: string) => {
    if (!stream.closed) stream.raw.write(`data: ${data}\n\n`);
  };
  return {
    get started() {
      return stream.started;
    },
    get closed() {
      return stream.closed;
    },
    onClose: stream.onClose,
    start(nodeId) {
      stream.start({
        'content-type': 'text/event-stream; charset=utf-8',
        connection: 'keep-alive',
        'x-request-id': requestId,
        'x-gpumesh-node': nodeId,
      });
    },
    write(chunk) {
      send(JSON.stringify(chunk));
    },
    finish(final) {
      if (stream.finished) return;
      if (!stream.started) {
        // An error before any chunk is answered as plain HTTP by the caller; an end without
        // chunks (an empty completion) still opens the stream.
        if (final && 'error' in final) return;
        this.start('');
      }
      if (final)
        send(
          JSON.stringify(
            openRouter && 'error' in final
              ? openRouterErrorChunk(final as { error: ErrorBody['error'] })
              : final,
          ),
        );
      send('[DONE]');
      stream.finished = true;
      stream.raw.end();
    },
  };
}
