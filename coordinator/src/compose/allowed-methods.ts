import type { RouteEntry } from '../app-context.js';

/**
 * The methods the app answers on `path` (a request path, no query): the routes whose URL pattern
 * (`:param` segments, a trailing `*`) matches it. Empty when no route has this path. The catch-all
 * `*` (CORS preflights) is no route of a path.
 */
export function allowedMethods(routes: readonly RouteEntry[], path: string): string[] {
  const segments = path.split('/');
  const methods = new Set<string>();
  for (const route of routes) {
    if (route.url !== '*' && matches(route.url, segments)) methods.add(route.method);
  }
  return [...methods].sort();
}

function matches(pattern: string, segments: readonly string[]): boolean {
  const parts = pattern.split('/');
  for (const [i, part] of parts.entries()) {
    if (part === '*') return true;
    const segment = segments[i];
    if (segment === undefined) return false;
    if (part.startsWith(':') ? segment === '' : part !== segment) return false;
  }
  return parts.length === segments.length;
}
