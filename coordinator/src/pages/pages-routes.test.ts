import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, test } from 'vitest';
import type { NetworkNodeView } from './network-stats.js';
import { PAGES_CSP, type PagesRoutesOptions, pagesRoutes } from './pages-routes.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumesh-pages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const installPath = join(dir, 'install.sh');
writeFileSync(installPath, '#!/bin/sh\nDEFAULT_COORDINATOR="http://127.0.0.1:8080"\n');

const nodes: NetworkNodeView[] = [
  {
    nodeId: '0x0000000000000000000000000000000000000001',
    state: 'online',
    role: 'gpu',
    tier: 'silver',
    models: [
      {
        id: 'tiny-<chat>',
        family: 'chat',
        price: { currency: 'USD', inputPerMTok: '100000000', outputPerMTok: '200000000' },
      },
    ],
  },
];

async function build(overrides: Partial<PagesRoutesOptions> = {}) {
  const app = Fastify();
  await app.register(pagesRoutes, {
    appUrl: 'http://mesh.test:8080/',
    routerUrl: 'http://mesh.test:8080',
    nativeSymbol: 'GM',
    nativeUsdPriceNano: 1_000_000_000n,
    staking: { baseApyBps: 500, tiers: [{ name: 'none', minStake: 0, multiplierBps: 10_000 }] },
    network: { listNodes: () => nodes, tokensServed: async () => ({ prompt: 1000n, completion: 234n }) },
    installScriptPath: installPath,
    now: () => Date.UTC(2026, 0, 1, 12, 0, 0),
    ...overrides,
  });
  return app;
}

describe('pagesRoutes', () => {
  test('default: /network renders the live stats and the install commands under a strict CSP', async () => {
    const app = await build();
    const response = await app.inject('/network');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toBe(PAGES_CSP);
    const page = response.body;
    expect(page).toContain('<script src="/assets/network.js" defer></script>');
    expect(page).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    expect(page).not.toMatch(/style="/); // no inline style (the CSP would block it)
    expect(page).toContain('<p class="kpi-value" data-stat="tokensServed.total">1,234</p>');
    expect(page).toContain('<dd data-stat="nodes.byTier.silver">1</dd>');
    expect(page).toContain('<code>tiny-&lt;chat&gt;</code>'); // node-supplied text is escaped
    expect(page).toContain('$0.10');
    for (const role of ['gpu', 'cpu', 'network']) {
      expect(page).toContain(
        `curl -fsSL http://mesh.test:8080/install.sh | sh -s -- --role ${role} --coordinator http://mesh.test:8080`,
      );
    }
    await app.close();
  });

  test('behavior: /api/network/stats is public JSON', async () => {
    const app = await build();
    const response = await app.inject('/api/network/stats');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      updatedAt: '2026-01-01T12:00:00.000Z',
      nodes: { total: 1, routable: 1 },
      models: [{ id: 'tiny-<chat>', nodes: 1 }],
      tokensServed: { prompt: 1000, completion: 234, total: 1234 },
    });
    await app.close();
  });

  test('behavior: the stats are computed once per their max-age, whichever page asks', async () => {
    let listed = 0;
    const app = await build({
      network: {
        listNodes: () => {
          listed++;
          return nodes;
        },
        tokensServed: async () => ({ prompt: 0n, completion: 0n }),
      },
    });
    const answers = await Promise.all([
      app.inject('/api/network/stats'),
      app.inject('/network'),
      app.inject('/api/network/stats'),
    ]);
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect(answers[0]!.headers['cache-control']).toBe('public, max-age=2');
    expect(listed).toBe(1);
    await app.close();
  });

  test('behavior: /dashboard is a static shell with its own script', async () => {
    const app = await build();
    const response = await app.inject('/dashboard');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toBe(PAGES_CSP);
    expect(response.body).toContain('<script type="module" src="/assets/dashboard/main.js"></script>');
    expect(response.body).not.toMatch(/<script>|<script [^>]*>[^<]/); // no inline script
    // Every module the page imports is preloaded, so the imports are not fetched one after another.
    const preloaded = [...response.body.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map(
      ([, href]) => String(href),
    );
    expect(preloaded).toContain('/assets/dashboard/api.js');
    expect(preloaded).toContain('/assets/dashboard/nodes-tab.js');
    expect(preloaded).not.toContain('/assets/dashboard/main.js');
    for (const href of preloaded) expect((await app.inject(href)).statusCode, href).toBe(200);
    expect(response.body).toContain('data-native-symbol="GM"');
    expect(response.body).toContain('id="connect"');
    // The activity log: its table, the button to the next page and the CSV export (dashboard.js).
    expect(response.body).toContain('<tbody id="activity-body">');
    expect(response.body).toContain('id="activity-more" hidden');
    expect(response.body).toContain('id="activity-export" href="/api/router/activity.csv"');
    await app.close();
  });

  test('behavior: assets are served with their type and revalidated by etag', async () => {
    const app = await build();
    const first = await app.inject('/assets/dashboard/sign-in.js');
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(first.headers['cache-control']).toBe('no-cache');
    expect(first.body).toContain('eth_requestAccounts');
    const again = await app.inject({
      url: '/assets/dashboard/sign-in.js',
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    // The stylesheet, kept in parts (assets/styles/), is served as one: the parts in name order.
    const css = await app.inject('/assets/gpumesh.css');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const styles = join(import.meta.dirname, 'assets', 'styles');
    const parts = readdirSync(styles).sort();
    expect(parts.length).toBeGreaterThan(1);
    expect(css.body).toBe(parts.map((part) => readFileSync(join(styles, part), 'utf8')).join('\n'));
    expect(css.body).toMatch(/^\/\* gpumesh pages: one stylesheet/);
    expect((await app.inject(`/assets/styles/${parts[0]}`)).statusCode).toBe(404);
    expect((await app.inject('/assets/favicon.svg')).headers['content-type']).toBe('image/svg+xml');
    expect((await app.inject('/assets/..%2Fpages-routes.ts')).statusCode).toBe(404);
    expect((await app.inject('/assets/nope.js')).statusCode).toBe(404);
    expect((await app.inject('/assets/dashboard')).statusCode).toBe(404);
    expect((await app.inject('/assets/dashboard/..%2F..%2Fpages-routes.ts')).statusCode).toBe(404);
    await app.close();
  });

  test('behavior: /install.sh names this coordinator as the default', async () => {
    const app = await build();
    const response = await app.inject('/install.sh');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/x-shellscript; charset=utf-8');
    expect(response.body).toBe('#!/bin/sh\nDEFAULT_COORDINATOR="http://mesh.test:8080"\n');
    await app.close();
  });

  test('error: /install.sh is 404 while the script is absent', async () => {
    const app = await build({ installScriptPath: join(dir, 'missing.sh') });
    expect((await app.inject('/install.sh')).statusCode).toBe(404);
    await app.close();
  });
});

describe('GET /install.sh with the repository script', () => {
  test('default: `curl <app>/install.sh | sh -s -- --dry-run` plans a node for this coordinator', async () => {
    const app = await build({ installScriptPath: undefined });
    const response = await app.inject('/install.sh');
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatch(/^#!\/bin\/sh\n/);
    expect(response.body).toContain('DEFAULT_COORDINATOR="http://mesh.test:8080"\n');
    await app.close();

    // The served text piped into sh, exactly as the one-command install does.
    const home = mkdtempSync(join(dir, 'home-'));
    const run = spawnSync(
      'sh',
      [
        '-s',
        '--',
        '--role',
        'gpu',
        '--dry-run',
        '--no-service',
        '--prefix',
        join(home, 'p'),
        '--state-dir',
        join(home, 's'),
      ],
      { input: response.body, encoding: 'utf8', env: { ...process.env, HOME: home } },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('role:         gpu');
    expect(run.stdout).toContain('coordinator:  http://mesh.test:8080');
    expect(run.stdout).toContain('Dry run: nothing was changed.');
  });
});
