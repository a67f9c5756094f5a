import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamSink } from '../router/route-request.js';

/**
 * A server-sent-events sink over the raw response. Headers go out with the first chunk, not
 * before, so a request that fails before any token still gets a plain HTTP error (and failover
 * stays invisible). Detects the client going away.
 */
export function openSse(
  request: FastifyRequest,
  reply: FastifyReply,
  requestId: string,
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
  const send = (data: string) => {
    if (!closed) raw.write(`data: ${data}\n\n`);
  };
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
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-request-id': requestId,
        'x-gpumesh-node': nodeId,
      });
    },
    write(chunk) {
      send(JSON.stringify(chunk));
    },
    finish(final) {
      if (finished) return;
      if (!started) {
        // An error before any chunk is answered as plain HTTP by the caller; an end without
        // chunks (an empty completion) still opens the stream.
        if (final && 'error' in final) return;
        this.start('');
      }
      if (final) send(JSON.stringify(final));
      send('[DONE]');
      finished = true;
      raw.end();
    },
  };
}
