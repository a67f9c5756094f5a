import { randomUUID } from 'node:crypto';

/** A fresh request id: fastify's request.id, sent on every response as x-request-id. */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}
