/**
 * Property test over the WHOLE route table (including routes other capabilities add later): every
 * registered route gets malformed paths, queries, headers and bodies; none may answer 5xx, and every
 * error must be in the common shape.
 */
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { RouteEntry } from './app.js';
import { isErrorBody } from './errors.js';
import { isOpenRouterErrorBody } from './openrouter-error.js';
import { createTestApp, describeBackends, signIn, type TestApp } from './testing/index.js';

/** Runs per route; with ~30 routes that is thousands of requests per backend (≥ 1,000 asserted). */
const RUNS_PER_ROUTE = Number(process.env.GPUMESH_FUZZ_RUNS_PER_ROUTE ?? 60);
const MIN_TOTAL_REQUESTS = 1_000;

/** 5xx answers that are a route's documented state, not a failure. */
const ALLOWED_5XX: Record<string, readonly number[]> = {
  'GET /readyz': [503], // "not ready" is the probe's answer while a dependency is down
};

const printable = (max: number) => fc.string({ unit: 'grapheme-ascii', maxLength: max });
const anyText = (max: number) => fc.oneof(printable(max), fc.string({ unit: 'binary', maxLength: max }));

describeBackends('every route under malformed input', (backend) => {
  let t: TestApp;
  let token: string;
  let requests = 0;
  let routeCount = 0;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'fuzz' });
    token = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
  });
  afterAll(async () => {
    console.info(`fuzz [${backend.name}]: ${requests} malformed requests over ${routeCount} routes`);
    expect(requests).toBeGreaterThanOrEqual(MIN_TOTAL_REQUESTS);
    await t?.close();
  });

  const fieldsOf = (route: RouteEntry, part: 'body' | 'querystring'): string[] => {
    const schema = route.schema?.[part] as { properties?: Record<string, unknown> } | undefined;
    return Object.keys(schema?.properties ?? {});
  };

  const requestFor = (route: RouteEntry) => {
    const bodyFields = fieldsOf(route, 'body');
    const queryFields = fieldsOf(route, 'querystring');
    const fieldValue = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      anyText(80),
      fc.constantFrom(
        '0x',
        `0x${'00'.repeat(20)}`,
        `0x${'zz'.repeat(20)}`,
        '-1',
        '1e309',
        'NaN',
        'sk-',
        `sk-${'a'.repeat(40)}`,
      ),
      fc.integer(),
      fc.double(),
    );
    const pathSegment = fc.oneof(
      anyText(40),
      fc.constantFrom('..', '%00', '%', 'x'.repeat(300), '0x12', 'key_x'),
    );
    const body = fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .dictionary(fc.constantFrom(...bodyFields, 'extra', '__proto__', 'constructor'), fieldValue)
        .map((o) => JSON.stringify(o)),
      anyText(200),
      fc.constantFrom(
        '{',
        '{"a":',
        'null',
        '[]',
        '""',
        '{"name":null}',
        '\u0000',
        'x'.repeat(2 * 1024 * 1024),
      ),
    );
    const query = fc.dictionary(
      fc.constantFrom(...queryFields, 'a', 'address', 'limit', '__proto__', 'x[]'),
      fc.oneof(anyText(60), fc.array(printable(10), { maxLength: 3 })),
      { maxKeys: 4 },
    );
    const authorization = fc.oneof(
      fc.constant(undefined),
      fc.constant(`Bearer ${token}`),
      printable(80).map((s) => `Bearer ${s}`),
      printable(40).map((s) => `Bearer sk-${s}`),
      fc.constantFrom(
        'Bearer',
        'Basic Zm9vOmJhcg==',
        `bearer ${token}x`,
        `Bearer ${token.split('.').slice(0, 2).join('.')}.`,
      ),
      printable(80),
    );
    const contentType = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/json; charset=utf-16',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
      ),
      printable(40),
    );
    const extraHeaders = fc.dictionary(
      fc.constantFrom(
        'accept',
        'accept-encoding',
        'x-forwarded-for',
        'origin',
        'x-request-id',
        'cookie',
        'range',
      ),
      printable(60),
      { maxKeys: 3 },
    );
    return fc.record({
      segments: fc.array(pathSegment, { minLength: 4, maxLength: 4 }),
      body,
      query,
      authorization,
      contentType,
      extraHeaders,
    });
  };

  const urlFor = (route: RouteEntry, segments: string[]) => {
    let i = 0;
    return route.url
      .replace(/:(\w+)/g, () => encodeURIComponent(segments[i++ % segments.length]!))
      .replace(/\*$/, () => encodeURIComponent(segments[3]!));
  };

  test('property: no 5xx and every error in the common shape', async () => {
    // Logout would revoke the shared token and starve later runs of authenticated coverage.
    const routes = t.app.ctx.routes.filter((r) => r.method !== 'HEAD' && r.url !== '*');
    expect(routes.length).toBeGreaterThan(10);
    routeCount = routes.length;
    for (const route of routes) {
      const key = `${route.method} ${route.url}`;
      await fc.assert(
        fc.asyncProperty(requestFor(route), async (r) => {
          const headers: Record<string, string> = { ...r.extraHeaders };
          const auth =
            route.url === '/api/auth/logout' && r.authorization === `Bearer ${token}`
              ? undefined
              : r.authorization;
          if (auth !== undefined) headers.authorization = auth;
          if (r.contentType !== undefined) headers['content-type'] = r.contentType;
          const options: InjectOptions = {
            method: route.method as InjectOptions['method'],
            url: urlFor(route, r.segments),
            query: r.query as Record<string, string>,
            headers,
            ...(r.body !== undefined ? { payload: r.body } : {}),
          };
          const res = await t.app.inject(options);
          requests++;
          const allowed = ALLOWED_5XX[key] ?? [];
          if (res.statusCode >= 500 && !allowed.includes(res.statusCode)) {
            throw new Error(
              `${key} → ${res.statusCode} ${res.body.slice(0, 300)} for ${JSON.stringify(options).slice(0, 400)}`,
            );
          }
          if (res.statusCode >= 400) {
            let body: unknown;
            try {
              body = res.json();
            } catch {
              throw new Error(`${key} → ${res.statusCode} non-JSON error body: ${res.body.slice(0, 200)}`);
            }
            // OpenRouter's base URL answers in OpenRouter's shape (numeric code, openrouter-error.ts);
            // a path whose ".." segments leave its route answers as the route it lands on.
            const common =
              isErrorBody(body) || (key.includes(' /api/v1/') && isOpenRouterErrorBody(body, res.statusCode));
            if (!common)
              throw new Error(`${key} → ${res.statusCode} not the common shape: ${res.body.slice(0, 200)}`);
            if (/at .+\.(ts|js):\d+|select |insert |stack/i.test(res.body)) {
              throw new Error(`${key} → ${res.statusCode} leaks internals: ${res.body.slice(0, 200)}`);
            }
          }
        }),
        { numRuns: RUNS_PER_ROUTE, seed: Number(process.env.GPUMESH_FUZZ_SEED ?? Date.now() % 2 ** 31) },
      );
    }
  }, 240_000);
});
