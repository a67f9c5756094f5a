import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * What every streamed answer (SSE, raw audio) does the same way: notices the client going away
 * (`closed`, `onClose`) and, on its first bytes, hijacks the reply and writes a 200 head with the
 * headers set on the reply so far (request id, rate limits) plus its own. Headers go out with the
 * first chunk, not before, so a failure before it is still a plain HTTP error and failover stays
 * invisible.
 */
export function hijackedStream(request: FastifyRequest, reply: FastifyReply) {
  const raw = reply.raw;
  const stream = {
    raw,
    started: false,
    closed: false,
    /** Set once the answer ended: the socket closing after that is not the client going away. */
    finished: false,
    onClose(fn: () => void) {
      if (stream.closed) fn();
      else listeners.push(fn);
    },
    /** Hijacks the reply and writes the 200 head (once). */
    start(headers: Record<string, string>) {
      if (stream.started) return;
      stream.started = true;
      reply.hijack();
      const kept: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(reply.getHeaders())) {
        if (v !== undefined) kept[k] = Array.isArray(v) ? v : String(v);
      }
      raw.writeHead(200, { ...kept, 'cache-control': 'no-cache', ...headers });
    },
  };
  const listeners: (() => void)[] = [];
  const onGone = () => {
    if (stream.finished || stream.closed) return;
    stream.closed = true;
    for (const fn of listeners.splice(0)) fn();
  };
  raw.on('close', () => {
    if (!raw.writableFinished) onGone();
  });
  request.raw.on('aborted', onGone);
  return stream;
}
