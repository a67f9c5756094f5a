/**
 * The published OpenAPI document, as a client generator sees it: it validates (swagger-parser),
 * every public route is in it with a unique operationId and its real auth, and a client generated
 * from it at run time (openapi-client-axios: one method per operationId) calls authenticated routes.
 */

import type { AddressInfo } from 'node:net';
import SwaggerParser from '@apidevtools/swagger-parser';
import { OpenAPIClientAxios } from 'openapi-client-axios';
import type { OpenAPIV3 } from 'openapi-types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listEndpoints } from '../coordinator/src/discovery/list-endpoints.js';
import { isErrorBody } from '../coordinator/src/errors.js';
import { createTestApp, signIn, type TestApp, testBackends } from '../coordinator/src/testing/index.js';

const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

describe('the OpenAPI document', () => {
  let t: TestApp;
  let base: string;
  let doc: OpenAPIV3.Document;

  beforeAll(async () => {
    t = await createTestApp(sqlite, { label: 'openapi' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as OpenAPIV3.Document;
  });
  afterAll(async () => {
    await t?.close();
  });

  test('default: it validates as OpenAPI 3', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  test('behavior: the voice endpoints are described — transcriptions and translations as multipart, speech as JSON', () => {
    const op = (path: string) => (doc.paths[path] as Record<string, OpenAPIV3.OperationObject>).post!;
    const body = (path: string) => (op(path).requestBody as OpenAPIV3.RequestBodyObject).content;
    expect(Object.keys(body('/v1/audio/transcriptions'))).toEqual(['multipart/form-data']);
    expect(Object.keys(body('/v1/audio/translations'))).toEqual(['multipart/form-data']);
    expect(Object.keys(body('/v1/audio/speech'))).toEqual(['application/json']);
    expect(op('/v1/audio/transcriptions').operationId).toBe('createTranscription');
    expect(op('/v1/audio/speech').operationId).toBe('createSpeech');
  });

  test('default: every public route is there with a unique operationId and its real auth', () => {
    const ids: string[] = [];
    for (const endpoint of listEndpoints(t.app.ctx.routes)) {
      const path = endpoint.path.replace(/:(\w+)/g, '{$1}');
      const operation = (doc.paths[path] as Record<string, OpenAPIV3.OperationObject> | undefined)?.[
        endpoint.method.toLowerCase()
      ];
      expect(operation, `${endpoint.method} ${path}`).toBeDefined();
      expect(operation!.operationId, `${endpoint.method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
      ids.push(operation!.operationId!);
      const security = JSON.stringify(operation!.security ?? []);
      const expected = endpoint.auth === 'jwt' ? 'bearerJwt' : endpoint.auth === 'apiKey' ? 'apiKey' : null;
      if (expected) expect(security, `${endpoint.method} ${path}`).toContain(expected);
      else expect(security, `${endpoint.method} ${path}`).not.toMatch(/bearerJwt|apiKey/);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // The inference routes declare the sk- key, the key routes the session JWT.
    const auth = Object.fromEntries(
      listEndpoints(t.app.ctx.routes).map((e) => [`${e.method} ${e.path}`, e.auth]),
    );
    expect(auth['POST /v1/chat/completions']).toBe('apiKey');
    expect(auth['GET /api/router/models']).toBe('jwt');
  });

  test('default: a client generated from it calls authenticated routes', async () => {
    const api = new OpenAPIClientAxios({
      definition: structuredClone(doc) as never,
      axiosConfigDefaults: { baseURL: base, validateStatus: () => true },
    });
    const client = (await api.init()) as unknown as Record<
      string,
      (params?: unknown, data?: unknown, config?: unknown) => Promise<{ status: number; data: unknown }>
    >;
    const jwt = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const asUser = { headers: { authorization: `Bearer ${jwt}` } };
    const user = await client.getApiUser!(null, null, asUser);
    expect(user.status).toBe(200);
    expect(user.data).toMatchObject({ id: expect.any(String) });
    const created = await client.postApiRouterKeys!(null, { name: 'generated' }, asUser);
    expect(created.status).toBe(200);
    const { key } = created.data as { key: string };
    const models = await client.listModels!(null, null, { headers: { authorization: `Bearer ${key}` } });
    expect(models).toMatchObject({ status: 200, data: { object: 'list' } });
    const anonymous = await client.getApiUser!();
    expect(anonymous.status).toBe(401);
    expect(isErrorBody(anonymous.data)).toBe(true);
  });
});
