import type { RouteEntry } from '../app-context.js';

export const AUTH_KIND = { none: 'none', jwt: 'jwt', apiKey: 'apiKey' } as const;
export type AuthKind = (typeof AUTH_KIND)[keyof typeof AUTH_KIND];

export type Endpoint = { method: string; path: string; auth: AuthKind; summary: string };

/**
 * The public endpoints, straight from the route table: every route except HEAD/OPTIONS twins and
 * routes whose schema says `hide: true` (pages, probes, metrics). A route's auth comes from its
 * OpenAPI `security` (bearerJwt → jwt, apiKey → apiKey, none → none), so a route added by any
 * capability shows up here, correctly labelled, without touching discovery/.
 */
export function listEndpoints(routes: readonly RouteEntry[]): Endpoint[] {
  const seen = new Set<string>();
  const out: Endpoint[] = [];
  for (const route of routes) {
    if (route.method === 'HEAD' || route.method === 'OPTIONS') continue;
    if (route.schema?.hide === true) continue;
    const key = `${route.method} ${route.url}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const security = JSON.stringify(route.schema?.security ?? []);
    const auth = security.includes('bearerJwt')
      ? AUTH_KIND.jwt
      : security.includes('apiKey')
        ? AUTH_KIND.apiKey
        : AUTH_KIND.none;
    const summary = typeof route.schema?.summary === 'string' ? route.schema.summary : '';
    out.push({ method: route.method, path: route.url, auth, summary });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}
