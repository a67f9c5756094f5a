import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import helmet from 'helmet';

/**
 * helmet's security headers (its defaults: CSP, HSTS, frame options, no-sniff…) on every answer.
 * They are the same for every request, so helmet runs once, here, into a recorder; each request
 * then only copies them — @fastify/helmet built a helmet instance and ran two async hooks per
 * request, ~5 % of a paid request's CPU in bench/gateway-load.ts. A route that needs another
 * policy sets its own header (the pages' CSP).
 */
export const securityHeaders = fp(async (app: FastifyInstance) => {
  const headers = helmetDefaults();
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
});

/** The headers helmet sets with its default options. */
export function helmetDefaults(): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let failed: unknown;
  // Synchronous with static options; the request is not read.
  helmet()({} as never, recorder as never, (error?: unknown) => {
    failed = error;
  });
  if (failed) throw failed;
  return headers;
}
