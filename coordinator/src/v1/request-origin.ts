import type { FastifyRequest } from 'fastify';
import type { RequestOrigin } from '../ledger/types.js';

/** The most of each header (or `user`) a usage row keeps, in characters. */
const MAX_CHARS = 512;

/**
 * Who sent a request, as OpenRouter's generation reports it: the Origin header, else the scheme and
 * host of the referer (OpenRouter's `HTTP-Referer` attribution header, else the browser's
 * `Referer`); the User-Agent; the body's `user`. Undefined under `provider.zdr`: nothing of such a
 * request is kept beyond what billing needs.
 */
export function requestOrigin(
  request: FastifyRequest,
  body: Record<string, unknown>,
): RequestOrigin | undefined {
  if ((body.provider as { zdr?: unknown } | null | undefined)?.zdr === true) return undefined;
  const header = (name: string) => {
    const value = request.headers[name];
    const text = Array.isArray(value) ? value[0] : value;
    return text ? text.slice(0, MAX_CHARS) : null;
  };
  const httpReferer = header('http-referer') ?? header('referer');
  return {
    origin: header('origin') ?? originOf(httpReferer) ?? '',
    httpReferer,
    userAgent: header('user-agent'),
    externalUser: typeof body.user === 'string' && body.user !== '' ? body.user.slice(0, MAX_CHARS) : null,
  };
}

/** `https://host[:port]` of a URL, or null when it is not an http(s) URL. */
function originOf(url: string | null): string | null {
  if (!url) return null;
  try {
    const { protocol, origin } = new URL(url);
    return protocol === 'http:' || protocol === 'https:' ? origin : null;
  } catch {
    return null;
  }
}
