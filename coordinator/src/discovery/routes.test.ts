import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestApp, describeBackends, type TestApp } from '../testing/index.js';
import { listEndpoints } from './list-endpoints.js';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

/** The agent plugin manifest format (schema_version v1), as published for ai-plugin.json. */
const AI_PLUGIN_MANIFEST_SCHEMA = {
  type: 'object',
  required: [
    'schema_version',
    'name_for_human',
    'name_for_model',
    'description_for_human',
    'description_for_model',
    'auth',
    'api',
    'logo_url',
    'contact_email',
    'legal_info_url',
  ],
  properties: {
    schema_version: { const: 'v1' },
    name_for_human: { type: 'string', minLength: 1, maxLength: 20 },
    name_for_model: { type: 'string', pattern: '^[a-zA-Z0-9_]{1,50}$' },
    description_for_human: { type: 'string', minLength: 1, maxLength: 100 },
    description_for_model: { type: 'string', minLength: 1, maxLength: 8000 },
    auth: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['none', 'user_http', 'service_http', 'oauth'] },
        authorization_type: { enum: ['bearer', 'basic'] },
      },
    },
    api: {
      type: 'object',
      required: ['type', 'url'],
      properties: {
        type: { const: 'openapi' },
        url: { type: 'string', format: 'uri' },
        is_user_authenticated: { type: 'boolean' },
      },
    },
    logo_url: { type: 'string', format: 'uri' },
    contact_email: { type: 'string', format: 'email' },
    legal_info_url: { type: 'string', format: 'uri' },
  },
} as const;

describeBackends('discovery routes', (backend) => {
  let t: TestApp;
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'disco',
      overrides: { chain: { tokens: { 'USD.s': `0x${'12'.repeat(20)}` }, rpcUrl: 'http://127.0.0.1:1' } },
    });
  });
  afterAll(async () => {
    await t?.close();
  });
  const get = (url: string) => t.app.inject({ method: 'GET', url });
  const localPath = (url: string) => new URL(url).pathname;

  test('default: ai-plugin.json validates and points at a live OpenAPI document and logo', async () => {
    const res = await get('/.well-known/ai-plugin.json');
    expect(res.statusCode).toBe(200);
    const manifest = res.json() as { api: { url: string }; logo_url: string; legal_info_url: string };
    const validate = ajv.compile(AI_PLUGIN_MANIFEST_SCHEMA);
    expect(validate(manifest), JSON.stringify(validate.errors)).toBe(true);
    for (const url of [manifest.api.url, manifest.logo_url, manifest.legal_info_url]) {
      expect(url.startsWith(t.config.publicUrl)).toBe(true);
      expect((await get(localPath(url))).statusCode).toBe(200);
    }
    const openapi = (await get(localPath(manifest.api.url))).json() as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(openapi.openapi).toMatch(/^3\./);
    for (const e of listEndpoints(t.app.ctx.routes)) {
      const path = e.path.replace(/:(\w+)/g, '{$1}');
      expect(openapi.paths[path], path).toBeDefined();
    }
  });

  test('default: skills.json validates against the published JSON Schema and reflects live config', async () => {
    const schema = (await get('/api/skills.schema.json')).json() as Record<string, unknown>;
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const skills = (await get('/api/skills.json')).json() as Record<string, unknown> & {
      chain: { chainId: number; gasPriceWei: string; tokens: { symbol: string; address: string | null }[] };
      urls: { rpc: string | null };
      staking: { tiers: { name: string }[]; txMethods: { method: string; public: boolean }[] };
    };
    const validate = ajv.compile(schema);
    expect(validate(skills), JSON.stringify(validate.errors)).toBe(true);
    expect(skills.chain.chainId).toBe(800000);
    expect(skills.chain.gasPriceWei).toBe('150000000000');
    expect(skills.urls.rpc).toBe('http://127.0.0.1:1');
    expect(skills.chain.tokens.find((x) => x.symbol === 'USD.s')?.address).toBe(`0x${'12'.repeat(20)}`);
    expect(skills.staking.tiers.map((x) => x.name)).toEqual(['none', 'basic', 'silver', 'gold', 'platinum']);
    expect(skills.staking.txMethods.filter((m) => m.public).map((m) => m.method)).toEqual([
      'chain_getStake',
      'chain_getTiers',
    ]);
    // and a broken document does not validate (the schema has teeth)
    expect(validate({ ...skills, chain: { ...skills.chain, chainId: 'x' } })).toBe(false);
    expect(validate({ ...skills, extra: 1 })).toBe(false);
  });

  test('behavior: every listed endpoint is a registered route, and every public route is listed', async () => {
    const skills = (await get('/api/skills.json')).json() as {
      endpoints: { method: string; path: string; auth: string }[];
    };
    const md = (await get('/SKILLS.md')).body;
    const quick = await get('/api/skills');
    expect(quick.statusCode).toBe(200);
    expect(quick.headers['content-type']).toMatch(/^text\/markdown/);
    for (const e of skills.endpoints) {
      expect(t.app.hasRoute({ method: e.method as 'GET', url: e.path }), `${e.method} ${e.path}`).toBe(true);
      expect(md).toContain(`| ${e.method} | \`${e.path}\` |`);
    }
    const listed = new Set(skills.endpoints.map((e) => `${e.method} ${e.path}`));
    const publicRoutes = t.app.ctx.routes.filter(
      (r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && r.schema?.hide !== true,
    );
    expect(publicRoutes.length).toBeGreaterThan(10);
    for (const r of publicRoutes)
      expect(listed.has(`${r.method} ${r.url}`), `${r.method} ${r.url}`).toBe(true);
    const auth = Object.fromEntries(skills.endpoints.map((e) => [`${e.method} ${e.path}`, e.auth]));
    expect(auth['GET /api/auth/nonce']).toBe('none');
    expect(auth['POST /api/router/keys']).toBe('jwt');
    expect(auth['GET /api/user']).toBe('jwt');
  });

  test('behavior: a route added by another capability appears automatically', async () => {
    const { buildApp } = await import('../app.js');
    const app = await buildApp({ config: t.config, store: t.store.store, clock: t.clock, logger: false });
    app.post('/v1/example', { schema: { summary: 'added later', security: [{ apiKey: [] }] } }, async () => ({
      ok: true,
    }));
    await app.ready();
    const skills = (await app.inject({ method: 'GET', url: '/api/skills.json' })).json() as {
      endpoints: { method: string; path: string; auth: string }[];
    };
    expect(skills.endpoints).toContainEqual({
      method: 'POST',
      path: '/v1/example',
      auth: 'apiKey',
      summary: 'added later',
    });
    const openapi = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    expect(openapi.paths['/v1/example']).toBeDefined();
    await app.close();
  });
});
