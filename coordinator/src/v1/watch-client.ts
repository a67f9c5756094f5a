import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientPresence } from '../router/types.js';

/**
 * Watches a non-streamed request's connection: the client is gone when the response closes before
 * it was written (it aborted, or its connection dropped), so the router cancels the job.
 */
export function watchClient(request: FastifyRequest, reply: FastifyReply): ClientPresence {
  let closed = false;
  const listeners: (() => void)[] = [];
  const onGone = () => {
    if (closed) return;
    closed = true;
    for (const fn of listeners.splice(0)) fn();
  };
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) onGone();
  });
  request.raw.on('aborted', onGone);
  return {
    get closed() {
      return closed;
    },
    onClose(fn) {
      if (closed) fn();
      else listeners.push(fn);
    },
  };
}
