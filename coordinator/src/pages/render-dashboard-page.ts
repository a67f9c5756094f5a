import { html } from './html.js';
import { renderLayout } from './render-layout.js';

/** Top-up sources the API accepts (design.md), in the order the form lists them. */
const TOPUP_SOURCES = ['USD.s', 'USDT.s', 'USDC.s', 'native'] as const;

/** One rung of the staking tier ladder (coordinator config `staking.tiers`). */
export type TierRung = { readonly name: string; readonly minStake: number; readonly multiplierBps: number };

export type DashboardPageOptions = {
  /** Symbol of the native token (staking amounts, native top-ups). */
  readonly nativeSymbol: string;
  /** Base APY of staking, in basis points. */
  readonly baseApyBps: number;
  /** The tier ladder, lowest first. */
  readonly tiers: readonly TierRung[];
  /** Base URL of the OpenAI-compatible router, shown beside a new key. */
  readonly routerUrl: string;
};

/**
 * The dashboard: a static shell that dashboard.js fills in after the wallet signs in (EIP-1193).
 * Nothing user-specific is rendered by the server, so the page itself never carries a secret.
 */
export function renderDashboardPage(options: DashboardPageOptions): string {
  const symbol = options.nativeSymbol;
  const main = html`
<section id="signin" class="card signin" aria-labelledby="signin-title">
  <h1 id="signin-title">Your gpumesh dashboard</h1>
  <p>Sign in with your wallet: it signs a one-time message, no password and no transaction.
    Then fund your credits, create API keys, follow your usage and stake.</p>
  <button type="button" id="connect">Connect wallet and sign in</button>
  <p id="signin-status" class="status" role="status" aria-live="polite"></p>
</section>

<div id="app" hidden>
  <div class="account-bar">
    <div>
      <h1>Dashboard</h1>
      <p class="muted">Signed in as <span class="address" id="account-address"></span></p>
    </div>
    <div class="actions">
      <button type="button" class="secondary" id="refresh">Refresh</button>
      <button type="button" class="secondary" id="signout">Sign out</button>
    </div>
  </div>
  <p id="app-status" class="status" role="status" aria-live="polite"></p>

  <div class="cards kpis" aria-label="Account summary">
    <div class="card kpi"><p class="kpi-label">Credit balance</p><p class="kpi-value" id="balance">–</p></div>
    <div class="card kpi"><p class="kpi-label">Spent on inference</p><p class="kpi-value" id="spend">–</p></div>
    <div class="card kpi"><p class="kpi-label">Staked</p><p class="kpi-value" id="stake-quantity">–</p><p class="kpi-sub">Tier <span id="stake-tier">–</span></p></div>
    <div class="card kpi"><p class="kpi-label">Claimable rewards</p><p class="kpi-value" id="stake-claimable">–</p></div>
  </div>

  <div class="grid-2">
    <section class="card" aria-labelledby="fund-title">
      <h2 id="fund-title">Add credits</h2>
      <p class="hint">1. Send ${symbol} or a stable token (USD.s, USDT.s, USDC.s) on chain 800000 to your proxy wallet:</p>
      <div class="command">
        <pre><code id="proxy-address">–</code></pre>
        <button type="button" class="copy" data-copy="proxy-address" aria-label="Copy the proxy wallet address">Copy</button>
      </div>
      <p class="hint">2. Record the transfer: the server reads it on chain and credits what it finds.</p>
      <form id="topup-form" class="form-grid">
        <div class="field"><label for="topup-source">Token</label>
          <select id="topup-source" name="source">${TOPUP_SOURCES.map(
            (source) =>
              html`<option value="${source}">${source === 'native' ? `${symbol} (native)` : source}</option>`,
          )}</select></div>
        <div class="field"><label for="topup-amount">Amount (USD)</label>
          <input id="topup-amount" name="amountUsd" type="number" min="0.01" step="0.01" required inputmode="decimal"></div>
        <div class="field span-2"><label for="topup-payment">Transaction hash</label>
          <input id="topup-payment" name="paymentId" required pattern="0x[0-9a-fA-F]{64}" placeholder="0x…" autocomplete="off" spellcheck="false"></div>
        <div><button type="submit">Top up</button></div>
      </form>
      <p id="topup-status" class="status" role="status" aria-live="polite"></p>
    </section>

    <section class="card" aria-labelledby="stake-title">
      <h2 id="stake-title">Staking</h2>
      <p class="hint">Stake ${symbol} from your proxy wallet to earn rewards and raise your nodes' tier.</p>
      <form id="stake-form" class="inline">
        <div class="field grow"><label for="stake-amount">Amount (${symbol})</label>
          <input id="stake-amount" name="amount" type="number" min="0.0001" step="0.0001" required inputmode="decimal"></div>
        <button type="submit">Stake</button>
      </form>
      <div class="inline-actions">
        <p class="hint">Rewards accrue every second. <button type="button" class="secondary" id="claim">Claim rewards</button></p>
      </div>
      <p id="stake-status" class="status" role="status" aria-live="polite"></p>
      <div class="table-scroll">
      <table class="data compact">
        <caption>Tier ladder: base APY ${formatBps(options.baseApyBps)}, times the tier's multiplier</caption>
        <thead><tr><th scope="col">Tier</th><th scope="col" class="num">Stake from</th><th scope="col" class="num">Reward multiplier</th><th scope="col" class="num">APY</th></tr></thead>
        <tbody>${options.tiers.map(
          (tier) =>
            html`<tr><th scope="row">${tier.name}</th><td class="num">${tier.minStake.toLocaleString('en-US')} ${symbol}</td><td class="num">×${(tier.multiplierBps / 10_000).toFixed(2)}</td><td class="num">${formatBps((options.baseApyBps * tier.multiplierBps) / 10_000)}</td></tr>`,
        )}</tbody>
      </table>
      </div>
    </section>
  </div>

  <section class="card" aria-labelledby="keys-title">
    <h2 id="keys-title">API keys</h2>
    <p class="hint">Use a key with any OpenAI SDK: base URL <code>${options.routerUrl}/v1</code>. Up to 10 active keys.</p>
    <form id="key-form" class="inline">
      <div class="field grow"><label for="key-name">Key name</label>
        <input id="key-name" name="name" required maxlength="64" placeholder="e.g. laptop" autocomplete="off"></div>
      <button type="submit">Create key</button>
    </form>
    <div id="key-secret" class="secret" hidden>
      <p><strong>Copy your new key now.</strong> It is shown only once; the server keeps only a hash.</p>
      <div class="command">
        <pre><code id="key-secret-value"></code></pre>
        <button type="button" class="copy" data-copy="key-secret-value" aria-label="Copy the new API key">Copy</button>
      </div>
    </div>
    <p id="key-status" class="status" role="status" aria-live="polite"></p>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">Your API keys</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" class="num">Spend</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody id="keys-body"><tr class="empty"><td colspan="7">No keys yet.</td></tr></tbody>
    </table>
    </div>
  </section>

  <section class="card usage" aria-labelledby="usage-title">
    <div class="section-head">
      <h2 id="usage-title">Usage, last 30 days</h2>
      <p class="muted" id="usage-totals"></p>
    </div>
    <p id="usage-status" class="status" role="status" aria-live="polite"></p>
    <div class="grid-2">
      <figure>
        <figcaption class="legend"><span><span class="swatch"></span>Cost per day (USD)</span></figcaption>
        <svg id="chart-days" class="chart" role="img" aria-labelledby="chart-days-title" viewBox="0 0 520 220"><title id="chart-days-title">Cost per day</title></svg>
      </figure>
      <figure>
        <figcaption class="legend"><span><span class="swatch alt"></span>Tokens by model</span></figcaption>
        <svg id="chart-models" class="chart" role="img" aria-labelledby="chart-models-title" viewBox="0 0 520 220"><title id="chart-models-title">Tokens by model</title></svg>
      </figure>
    </div>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">Usage by model</caption>
      <thead><tr><th scope="col">Model</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Prompt tokens</th><th scope="col" class="num">Completion tokens</th><th scope="col" class="num">Cost</th></tr></thead>
      <tbody id="usage-models-body"><tr class="empty"><td colspan="5">No usage yet.</td></tr></tbody>
    </table>
    </div>
  </section>

  <section class="card activity" aria-labelledby="activity-title">
    <div class="section-head">
      <h2 id="activity-title">Activity</h2>
      <a class="button secondary" id="activity-export" href="/api/router/activity.csv" download>Export CSV</a>
    </div>
    <p class="hint">Your requests, newest first. The CSV export holds up to the newest 100,000.</p>
    <p id="activity-status" class="status" role="status" aria-live="polite"></p>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">Your requests, newest first</caption>
      <thead><tr><th scope="col">Time (UTC)</th><th scope="col">Model</th><th scope="col">Node</th><th scope="col">Key</th><th scope="col" class="num">Prompt</th><th scope="col" class="num">Completion</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Latency</th><th scope="col" class="num">Tokens/s</th><th scope="col">Finish</th></tr></thead>
      <tbody id="activity-body"><tr class="empty"><td colspan="10">No requests yet.</td></tr></tbody>
    </table>
    </div>
    <div class="more"><button type="button" class="secondary" id="activity-more" hidden>More</button></div>
  </section>
</div>`;
  return renderLayout({
    title: 'Dashboard',
    current: 'dashboard',
    script: 'dashboard.js',
    main,
    data: { 'native-symbol': symbol },
  });
}

/** 500 → "5%", 625 → "6.25%". */
function formatBps(bps: number): string {
  return `${Number((bps / 100).toFixed(2))}%`;
}
