import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamSink } from '../../router/route-request.js';

/**
 * A speech answer streamed as raw audio: headers go out with the first audio chunk (so a failure
 * before it is still a plain HTTP error and failover stays invisible), each node `audio.chunk`'s
 * bytes are written as they arrive, and the cost goes in the `x-gpumesh-cost` trailer once the
 * job is settled (the body is audio; GET /api/v1/generation?id= has it too). A failure after the
 * first bytes cuts the response (the client sees a truncated body, never a 200 that looks whole).
 */
export function openAudioStream(
  request: FastifyRequest,
  reply: FastifyReply,
  contentType: string,
): StreamSink & { readonly started: boolean } {
  const raw = reply.raw;
  let started = false;
  let closed = false;
  let finished = false;
  const listeners: (() => void)[] = [];
  const onGone = () => {
    if (finished || closed) return;
    closed = true;
    for (const fn of listeners.splice(0)) fn();
  };
  raw.on('close', () => {
    if (!raw.writableFinished) onGone();
  });
  request.raw.on('aborted', onGone);
  return {
    get started() {
      return started;
    },
    get closed() {
      return closed;
    },
    onClose(fn) {
      if (closed) fn();
      else listeners.push(fn);
    },
    start(nodeId) {
      if (started) return;
      started = true;
      reply.hijack();
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(reply.getHeaders())) {
        if (v !== undefined) headers[k] = Array.isArray(v) ? v : String(v);
      }
      raw.writeHead(200, {
        ...headers,
        'content-type': contentType,
        'cache-control': 'no-cache',
        trailer: 'x-gpumesh-cost',
        'x-request-id': request.id,
        'x-gpumesh-node': nodeId,
      });
    },
    write(chunk) {
      if (closed || chunk.object !== 'audio.chunk' || typeof chunk.data !== 'string') return;
      if (!started) this.start('');
      raw.write(Buffer.from(chunk.data, 'base64'));
    },
    finish(final) {
      if (finished) return;
      finished = true;
      if (!started) {
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
