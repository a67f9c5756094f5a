import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamSink } from '../../router/types.js';
import { hijackedStream } from '../hijacked-stream.js';

/**
 * A speech answer streamed as raw audio (hijacked-stream.ts: headers with the first audio chunk,
 * so a failure before it is still a plain HTTP error): each node `audio.chunk`'s bytes are written
 * as they arrive, and the cost goes in the `x-gpumesh-cost` trailer once the job is settled (the
 * body is audio; GET /api/v1/generation?id= has it too). A failure after the first bytes cuts the
 * response (the client sees a truncated body, never a 200 that looks whole).
 */
export function openAudioStream(
  request: FastifyRequest,
  reply: FastifyReply,
  contentType: string,
): StreamSink & { readonly started: boolean } {
  const stream = hijackedStream(request, reply);
  const { raw } = stream;
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
        'content-type': contentType,
        trailer: 'x-gpumesh-cost',
        'x-request-id': request.id,
        'x-gpumesh-node': nodeId,
      });
    },
    write(chunk) {
      if (stream.closed || chunk.object !== 'audio.chunk' || typeof chunk.data !== 'string') return;
      if (!stream.started) this.start('');
      raw.write(Buffer.from(chunk.data, 'base64'));
    },
    finish(final) {
      if (stream.finished) return;
      stream.finished = true;
      if (!stream.started) {
        if (final && 'error' in final) return; // the caller answers with a plain HTTP error
        this.start('');
      }
      if (final && 'error' in final) {
        raw.destroy();
        return;
      }
      const cost = (final?.usage as { cost?: unknown } | undefined)?.cost;
      if (typeof cost === 'number') raw.addTrailers({ 'x-gpumesh-cost': String(cost) });
      raw.end();
    },
  };
}
