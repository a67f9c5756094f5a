import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBodyFor } from './errors.js';

/**
 * The answer for a request no route takes: 405 with `Allow` when the path exists under other
 * methods (`allowed` lists them), else 404. Both in the common shape.
 */
export function notFoundHandler(
  allowed: (path: string) => readonly string[],
): (request: FastifyRequest, reply: FastifyReply) => void {
  return (request, reply) => {
    const methods = allowed(request.url.split('?')[0] ?? '');
    // A route of this very method that found nothing (an unknown asset) is a 404.
    if (methods.length > 0 && !methods.includes(request.method)) {
      const use = `${request.method} is not allowed here; use ${methods.join(', ')}.`;
      const body = errorBodyFor(request, new ApiError('method_not_allowed', use));
      void reply
        .status(405)
        .header('allow', methods.join(', '))
        .type('application/json; charset=utf-8')
        .send(body);
      return;
    }
    const missing = new ApiError('not_found', `No route for ${request.method} on this path.`);
    const body = errorBodyFor(request, missing);
    void reply.status(404).type('application/json; charset=utf-8').send(body);
  };
}
