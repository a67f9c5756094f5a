import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type {} from '@fastify/swagger'; // types of `schema.hide` and `summary`
import type { FastifyInstance, FastifyReply } from 'fastify';
import { joinAssets, loadAssets } from './load-assets.js';
import { buildNetworkStats, type NetworkSource, nodesToList } from './network-stats.js';
import type { NodePackages } from './node-packages.js';
import { DASHBOARD_MODULES, renderDashboardPage, type TierRung } from './render-dashboard-page.js';
import { renderInstallScript } from './render-install-script.js';
import { ASSETS_PREFIX } from './render-layout.js';
import { renderNetworkPage } from './render-network-page.js';
import { reuseFor } from './reuse-for.js';

/**
 * The pages' Content-Security-Policy: only this origin's own script, stylesheet and images, calls
 * only to this origin; no inline script or style, no framing, no plugins, no form posts elsewhere.
 */
export const PAGES_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * install.sh (written by the node package): from the sources, the one at the repository root; the
 * compiled package ships a copy beside this module (scripts/build-package.mjs --copy).
 */
export const DEFAULT_INSTALL_SCRIPT_PATH = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../../../install.sh' : './install.sh', import.meta.url),
);
const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

/** A coordinator without a hub: no node connected, nothing served. */
const EMPTY_NETWORK: NetworkSource = {
  listNodes: () => [],
  tokensServed: async () => ({ prompt: 0n, completion: 0n }),
};

/** How long browsers and proxies may reuse the public stats, in seconds. */
const STATS_MAX_AGE_S = 2;

export type PagesRoutesOptions = {
  /** This coordinator's public URL (filled into install.sh and the install commands). */
  readonly appUrl: string;
  /** Base URL of the OpenAI-compatible router. */
  readonly routerUrl: string;
  readonly nativeSymbol: string;
  /** Staking terms shown on the dashboard (config `staking`). */
  readonly staking: { readonly baseApyBps: number; readonly tiers: readonly TierRung[] };
  /** Nanousd per 1 native token, to rank native-priced offers against USD-priced ones. */
  readonly nativeUsdPriceNano: bigint;
  /** The hub's live nodes and the usage totals; default: no node, no usage. */
  readonly network?: NetworkSource;
  readonly installScriptPath?: string;
  /** The node package tarballs install.sh installs (node-packages.ts); absent: not served. */
  readonly nodePackages?: NodePackages;
  /** Milliseconds since the epoch (the app's clock). */
  readonly now?: () => number;
};

/**
 * `GET /network` (live stats + provider setup), `GET /dashboard` (wallet sign-in, credits, keys,
 * usage, staking), `GET /api/network/stats` (public JSON), `GET /install.sh` (with this
 * coordinator's URL as the default) and the pages' static files under `/assets/`.
 */
export async function pagesRoutes(app: FastifyInstance, options: PagesRoutesOptions): Promise<void> {
  const now = options.now ?? Date.now;
  const network = options.network ?? EMPTY_NETWORK;
  const installScriptPath = options.installScriptPath ?? DEFAULT_INSTALL_SCRIPT_PATH;
  const assets = joinAssets(await loadAssets(ASSETS_DIR), 'styles/', 'gpumesh.css');
  const appUrl = options.appUrl.replace(/\/+$/, '');
  const routerUrl = options.routerUrl.replace(/\/+$/, '');
  const dashboard = renderDashboardPage({
    nativeSymbol: options.nativeSymbol,
    baseApyBps: options.staking.baseApyBps,
    tiers: options.staking.tiers,
    routerUrl,
    modules: [...assets.keys()].filter((name) => name.startsWith(DASHBOARD_MODULES)),
  });

  async function computeStats() {
    const nodes = network.listNodes();
    const suspendedNodes = network.suspendedNodes ? await network.suspendedNodes() : [];
    // Per-node figures only for the nodes listed one by one, not for the whole network.
    const listed = nodesToList(nodes, suspendedNodes);
    const ids = listed.map((n) => n.nodeId);
    // The reads are independent: at once (on PostgreSQL, one round trip's wait instead of four).
    const [tokensServed, uptime24h, trust, suspensions] = await Promise.all([
      network.tokensServed(),
      network.uptime24h?.(ids),
      network.trust?.(ids),
      network.suspensions?.(),
    ]);
    return buildNetworkStats({
      nodes,
      suspendedNodes,
      listed,
      tokensServed,
      ...(uptime24h ? { uptime24h } : {}),
      ...(trust ? { trust } : {}),
      ...(suspensions ? { suspensions } : {}),
      ...(network.spotCheckRate !== undefined ? { spotCheckRate: network.spotCheckRate } : {}),
      nativeUsdPriceNano: options.nativeUsdPriceNano,
      nativeSymbol: options.nativeSymbol,
      now: now(),
    });
  }

  // The stats cost grows with the node list (and ~10 queries): computed at most once per the
  // max-age their answer already advertises, and shared by every view meanwhile.
  const stats = reuseFor(computeStats, STATS_MAX_AGE_S * 1000);

  // The page rendered once per stats (a list of 200 nodes and every model's prices).
  let page: { stats: Awaited<ReturnType<typeof stats>>; body: string } | undefined;
  async function networkPage(): Promise<string> {
    const current = await stats();
    if (page?.stats !== current)
      page = { stats: current, body: renderNetworkPage({ stats: current, appUrl, routerUrl }) };
    return page.body;
  }

  function sendPage(reply: FastifyReply, body: string) {
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', PAGES_CSP)
      .header('cache-control', 'no-cache')
      .send(body);
  }

  app.get('/network', { schema: { hide: true } }, async (_request, reply) =>
    sendPage(reply, await networkPage()),
  );

  app.get('/dashboard', { schema: { hide: true } }, async (_request, reply) => sendPage(reply, dashboard));

  app.get(
    '/api/network/stats',
    { schema: { summary: 'Public live network statistics', tags: ['network'] } },
    async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${STATS_MAX_AGE_S}`);
      return stats();
    },
  );

  // A wildcard, for the files in subfolders (dashboard/*.js); only names loadAssets found are served.
  app.get<{ Params: { '*': string } }>(
    `${ASSETS_PREFIX}/*`,
    { schema: { hide: true } },
    async (request, reply) => {
      const asset = assets.get(request.params['*']);
      if (!asset) return reply.callNotFound();
      reply.header('etag', asset.etag).header('cache-control', 'no-cache');
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.type(asset.type).send(asset.body);
    },
  );

  const { nodePackages } = options;
  if (nodePackages) {
    app.get(
      '/install/packages.json',
      {
        schema: {
          summary: 'The node package tarballs install.sh installs, with their SHA-256',
          tags: ['network'],
        },
      },
      async (_request, reply) => {
        reply.header('cache-control', 'no-cache');
        return nodePackages.list();
      },
    );
    app.get<{ Params: { file: string } }>(
      '/install/packages/:file',
      { schema: { hide: true, params: { type: 'object', properties: { file: { type: 'string' } } } } },
      async (request, reply) => {
        const bytes = await nodePackages.read(request.params.file);
        if (!bytes) return reply.callNotFound();
        return reply.type('application/gzip').header('cache-control', 'no-cache').send(bytes);
      },
    );
  }

  app.get('/install.sh', { schema: { hide: true } }, async (_request, reply) => {
    let script: string;
    try {
      script = await readFile(installScriptPath, 'utf8');
    } catch {
      return reply.callNotFound();
    }
    return reply
      .type('text/x-shellscript; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send(renderInstallScript(script, appUrl));
  });
}
