import { html, type SafeHtml } from './html.js';
import type { ModelPrice, NetworkStats, NodeTrustView } from './network-stats.js';
import { renderLayout } from './render-layout.js';

/** How often the page script refreshes the stats, in milliseconds (read from <body data-refresh-ms>). */
export const NETWORK_REFRESH_MS = 5_000;

export type NetworkPageOptions = {
  readonly stats: NetworkStats;
  /** This coordinator's public URL: nodes connect here and the installer is served from here. */
  readonly appUrl: string;
  /** Base URL of the OpenAI-compatible router (clients use `<routerUrl>/v1`). */
  readonly routerUrl: string;
};

/** The three kinds of provider node, as the installer's `--role` names them. */
const NODE_KINDS = [
  {
    role: 'gpu',
    title: 'GPU node',
    text: 'Serves chat, embedding, vision and voice models on NVIDIA, AMD or Apple GPUs and earns for every token.',
  },
  {
    role: 'cpu',
    title: 'CPU node',
    text: 'Serves small chat and embedding models on any machine with a few free cores and some RAM.',
  },
  {
    role: 'network',
    title: 'Network node',
    text: 'Verifies what other nodes serve (paid per verified token; tier silver) and relays jobs between coordinators and nodes.',
  },
] as const;

/** `curl -fsSL <app>/install.sh | sh -s -- --role <role> --coordinator <app>`. */
function installCommand(appUrl: string, role: string): string {
  return `curl -fsSL ${appUrl}/install.sh | sh -s -- --role ${role} --coordinator ${appUrl}`;
}

/** The /network page: live stats (refreshed by network.js) and the one-command provider setup. */
export function renderNetworkPage(options: NetworkPageOptions): string {
  const { stats } = options;
  const main = html`
<section class="intro">
  <h1>The gpumesh network</h1>
  <p class="lead">Open, paid AI inference. Point any OpenAI SDK at
    <code>${options.routerUrl}/v1</code>; every request goes to the cheapest live node that serves the model.</p>
</section>

<section aria-labelledby="stats-title">
  <div class="section-head">
    <h2 id="stats-title">Live network</h2>
    <p class="muted" aria-live="polite">Updated <time id="stats-updated" datetime="${stats.updatedAt}">${stats.updatedAt.slice(11, 19)} UTC</time></p>
  </div>
  <div class="cards kpis">
    ${kpi('Nodes online', 'nodes.routable', stats.nodes.routable)}
    ${kpi('Nodes connected', 'nodes.total', stats.nodes.total)}
    ${kpi('Models served', 'models.length', stats.models.length)}
    ${kpi('Tokens served', 'tokensServed.total', stats.tokensServed.total)}
  </div>
  <div class="cards breakdowns">
    ${breakdown('By state', 'byState', stats.nodes.byState)}
    ${breakdown('By role', 'byRole', stats.nodes.byRole, ROLE_LABELS)}
    ${breakdown('By tier', 'byTier', stats.nodes.byTier)}
  </div>
  <div class="card">
    <h3>Models and their cheapest prices</h3>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">Models served by online nodes, with the cheapest price per million tokens (voice models: per audio second or per million characters)</caption>
      <thead><tr><th scope="col">Model</th><th scope="col">Family</th><th scope="col" class="num">Nodes</th><th scope="col" class="num">Input / 1M tokens (voice: as noted)</th><th scope="col" class="num">Output / 1M tokens</th></tr></thead>
      <tbody id="models-body">${modelRows(stats)}</tbody>
    </table>
    </div>
  </div>
  <div class="card">
    <h3>Nodes</h3>
    <p class="hint">Uptime: the share of the last 24 hours (or of the time since it was first seen,
      if shorter) the node was connected. Verified: at random
      times the coordinator sends each node requests shaped like client traffic and has a network
      node holding the same weights score the answer token by token; a node passes five to leave
      probation, and one whose answers fail is suspended and its owner's stake slashed.
      Reputation (0–100) weighs those checks, usage reports, failed jobs and uptime.
      <span id="spot-checks">${spotCheckText(stats.spotCheckRate)}</span></p>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">Nodes connected now, then the suspended ones, with their uptime over the last 24 hours and their verification standing</caption>
      <thead><tr><th scope="col">Node</th><th scope="col">State</th><th scope="col">Role</th><th scope="col">Tier</th><th scope="col">Models</th><th scope="col" class="num">Uptime (24 h)</th><th scope="col">Verified</th><th scope="col" class="num">Reputation</th></tr></thead>
      <tbody id="nodes-body">${nodeRows(stats)}</tbody>
    </table>
    </div>
  </div>
  <div class="card">
    <h3>Recent suspensions</h3>
    <ul class="suspensions" id="suspensions">${suspensionItems(stats)}</ul>
  </div>
</section>

<section aria-labelledby="setup-title" id="setup">
  <div class="section-head">
    <h2 id="setup-title">Run a provider node</h2>
  </div>
  <p>One command installs the gpumesh node daemon, detects your hardware, and connects it to this
    coordinator at <code>${options.appUrl}</code>. It needs Linux or macOS with Node.js 20.</p>
  <div class="setup">
    ${NODE_KINDS.map((kind) => {
      const command = installCommand(options.appUrl, kind.role);
      return html`<article class="card install" data-role="${kind.role}">
      <div class="install-text"><h3>${kind.title}</h3><p>${kind.text}</p></div>
      <div class="command">
        <pre><code id="install-${kind.role}">${command}</code></pre>
        <button type="button" class="copy" data-copy="install-${kind.role}" aria-label="Copy the ${kind.title} install command">Copy</button>
      </div>
    </article>`;
    })}
  </div>
  <p class="muted">The installer is plain shell: read it first at <a href="/install.sh">/install.sh</a>.
    Stake the native token from the <a href="/dashboard">dashboard</a> to climb the tier ladder.</p>
</section>`;
  return renderLayout({
    title: 'Network',
    current: 'network',
    script: 'network.js',
    main,
    data: { 'refresh-ms': String(NETWORK_REFRESH_MS) },
  });
}

function kpi(label: string, key: string, value: number): SafeHtml {
  return html`<div class="card kpi"><p class="kpi-label">${label}</p><p class="kpi-value" data-stat="${key}">${value.toLocaleString('en-US')}</p></div>`;
}

const ROLE_LABELS: Readonly<Record<string, string>> = { gpu: 'GPU', cpu: 'CPU', network: 'Network' };

function breakdown(
  title: string,
  group: string,
  counts: Readonly<Record<string, number>>,
  labels: Readonly<Record<string, string>> = {},
): SafeHtml {
  return html`<div class="card"><h3>${title}</h3><dl class="counts">${Object.entries(counts).map(
    ([name, count]) =>
      html`<div><dt>${labels[name] ?? name[0]?.toUpperCase() + name.slice(1)}</dt><dd data-stat="nodes.${group}.${name}">${count.toLocaleString('en-US')}</dd></div>`,
  )}</dl></div>`;
}

function modelRows(stats: NetworkStats): SafeHtml {
  if (stats.models.length === 0) {
    return html`<tr class="empty"><td colspan="5">No model is being served right now. Run a node below to be the first.</td></tr>`;
  }
  return html`${stats.models.map(
    (model) =>
      html`<tr><th scope="row"><code>${model.id}</code></th><td>${model.family}</td><td class="num">${model.nodes}</td><td class="num">${price(model.cheapest, 'input', stats.nativeSymbol)}${UNIT_SUFFIX[model.unit] ?? ''}</td><td class="num">${model.unit === 'per_million_tokens' ? price(model.cheapest, 'output', stats.nativeSymbol) : '—'}</td></tr>`,
  )}`;
}

/** Voice prices are per second of audio in or per million characters (kept in step with network.js). */
const UNIT_SUFFIX: Readonly<Record<string, string>> = {
  per_second: ' per audio second',
  per_million_characters: ' per M characters',
};

/** `$0.10`, or `0.5 GM ≈ $0.10` for a native-priced offer. Kept in step with network.js. */
function price(p: ModelPrice, side: 'input' | 'output', symbol: string): string {
  const usd = formatUsd(side === 'input' ? p.inputUsdPerMTok : p.outputUsdPerMTok);
  if (p.currency === 'USD') return usd;
  return `${side === 'input' ? p.inputPerMTok : p.outputPerMTok} ${symbol} ≈ ${usd}`;
}

function formatUsd(value: number): string {
  return value.toLocaleString('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: 6,
  });
}

/** One row per listed node; the same cells network.js renders on refresh. */
function nodeRows(stats: NetworkStats): SafeHtml | SafeHtml[] {
  if (stats.nodeList.length === 0) {
    return html`<tr class="empty"><td colspan="8">No node is connected right now.</td></tr>`;
  }
  return stats.nodeList.map(
    (node) =>
      html`<tr><th scope="row"><code title="${node.nodeId}">${shortNodeId(node.nodeId)}</code></th><td><span class="dot ${node.state}"></span>${node.state}</td><td>${node.role}</td><td>${node.tier}</td><td>${node.models.map((m) => html`<code class="model-chip">${m}</code>`)}</td><td class="num">${formatUptime(node.uptime24h)}</td><td>${formatVerified(node.trust)}</td><td class="num">${node.trust ? String(node.trust.reputation) : '—'}</td></tr>`,
  );
}

/**
 * "trusted · checked 12:03 UTC", "probation · not checked yet", and for a node that failed a check
 * "probation · checked 12:03 UTC · 1 of 3 checks failed · last failed 12:01 UTC: <why>"; "—"
 * without trust checks. Kept in step with network.js.
 */
export function formatVerified(trust: NodeTrustView | null): string {
  if (!trust) return '—';
  const parts = [
    trust.status,
    trust.lastCheckAt ? `checked ${trust.lastCheckAt.slice(11, 16)} UTC` : 'not checked yet',
  ];
  if (trust.failed) parts.push(`${trust.failed} of ${trust.failed + (trust.passed ?? 0)} checks failed`);
  if (trust.lastFailure) {
    parts.push(`last failed ${trust.lastFailure.at.slice(11, 16)} UTC: ${trust.lastFailure.reason}`);
  }
  return parts.join(' · ');
}

/** What spot checks of live traffic mean for a client's privacy, at this coordinator's rate. */
export function spotCheckText(rate: number): string {
  return rate > 0
    ? `Spot checks: ${(rate * 100).toFixed(rate < 0.01 ? 2 : 0)}% of live completions are verified the same way, so a second provider sees those prompts.`
    : 'Spot checks of live traffic are off here: only the node serving a request sees its prompt.';
}

function suspensionItems(stats: NetworkStats): SafeHtml | SafeHtml[] {
  if (stats.suspensions.length === 0) return html`<li class="empty">No node has been suspended.</li>`;
  return stats.suspensions.map(
    (s) =>
      html`<li><code title="${s.nodeId}">${shortNodeId(s.nodeId)}</code> <time datetime="${s.at}">${s.at.slice(0, 16).replace('T', ' ')} UTC</time>${s.slashed ? html` · stake slashed ${s.slashed}` : ''}${slashProof(s)}<br><span class="muted">${s.reason}</span></li>`,
  );
}

/** A slash's proof: its transaction in the staking pool, and its evidence with the sha256 named there. */
function slashProof(s: NetworkStats['suspensions'][number]): SafeHtml | string {
  if (!s.evidenceUrl || !s.evidenceHash) return '';
  const tx = s.slashTxHash
    ? html` · tx <code title="${s.slashTxHash}">${s.slashTxHash.slice(0, 10)}…</code>`
    : '';
  return html`${tx} · <a href="${s.evidenceUrl}" title="sha256 ${s.evidenceHash}">evidence</a> <code>${s.evidenceHash.slice(0, 10)}…</code>`;
}

function shortNodeId(id: string): string {
  return `${id.slice(0, 8)}…${id.slice(-6)}`;
}

/** 0.98765 → "98.8%"; null → "—". */
export function formatUptime(uptime: number | null): string {
  return uptime === null ? '—' : `${(uptime * 100).toFixed(1)}%`;
}
