import { html, type SafeHtml } from './html.js';
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
  /** Paths of the dashboard's modules under /assets (preloaded); default: none. */
  readonly modules?: readonly string[];
};

/** Folder under /assets of the dashboard's ES modules: one per tab and section, and their helpers. */
export const DASHBOARD_MODULES = 'dashboard/';

/** The module the page loads; it imports the others. */
const DASHBOARD_MAIN = `${DASHBOARD_MODULES}main.js`;

/**
 * The dashboard: a static shell that its modules (assets/dashboard/) fill in after the wallet signs in (EIP-1193).
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
  <div id="dev-wallets" class="dev-wallets" hidden>
    <p class="muted">No browser wallet? This coordinator runs a local devnet: sign in as its dev wallet.</p>
  </div>
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

  <div class="tabs" role="tablist" aria-label="Dashboard sections">
    <button type="button" role="tab" id="tab-account" aria-controls="pane-account" aria-selected="true">Credits and keys</button>
    <button type="button" role="tab" id="tab-nodes" aria-controls="pane-nodes" aria-selected="false" tabindex="-1">My nodes</button>
  </div>

  <div id="pane-account" role="tabpanel" aria-labelledby="tab-account">
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
      <p class="hint">Stake ${symbol} from your proxy wallet to earn rewards and raise your nodes' tier. The stake is held by the staking pool contract, where anyone can read it: <span id="stake-pool">–</span>.</p>
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
  </div>
${renderNodesPane()}
</div>`;
  return renderLayout({
    title: 'Dashboard',
    current: 'dashboard',
    script: DASHBOARD_MAIN,
    module: true,
    preload: [...(options.modules ?? [])].filter((path) => path !== DASHBOARD_MAIN).sort(),
    main,
    data: { 'native-symbol': symbol },
  });
}

/** The "My nodes" tab: the owner's nodes, earnings, linking a node, payouts. Filled by dashboard/nodes-tab.js. */
function renderNodesPane(): SafeHtml {
  return html`
  <div id="pane-nodes" role="tabpanel" aria-labelledby="tab-nodes" hidden>
  <div class="cards kpis" aria-label="Earnings summary">
    <div class="card kpi"><p class="kpi-label">Earnings to pay out</p><p class="kpi-value" id="earnings-balance">–</p><p class="kpi-sub" id="earnings-balance-note">client jobs, plus canary and verification pay, less payouts</p></div>
    <div class="card kpi"><p class="kpi-label">Earned today</p><p class="kpi-value" id="earnings-today">–</p></div>
    <div class="card kpi"><p class="kpi-label">Last 7 days</p><p class="kpi-value" id="earnings-week">–</p></div>
    <div class="card kpi"><p class="kpi-label">Nodes online</p><p class="kpi-value" id="nodes-online">–</p></div>
  </div>

  <section class="card" aria-labelledby="nodes-title">
    <h2 id="nodes-title">Your nodes</h2>
    <p id="nodes-status" class="status" role="status" aria-live="polite"></p>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">The nodes your wallet owns</caption>
      <thead><tr><th scope="col">Node</th><th scope="col">Status</th><th scope="col">Verified · reputation</th><th scope="col" class="num">Uptime 24 h / 7 d</th><th scope="col">Models</th><th scope="col" class="num">Jobs</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Tokens in / out</th><th scope="col" class="num">TTFT · tok/s</th><th scope="col" class="num">Today</th><th scope="col" class="num">7 days</th><th scope="col" class="num">Total</th></tr></thead>
      <tbody id="nodes-body"><tr class="empty"><td colspan="12">No nodes linked to this wallet yet. Link one below.</td></tr></tbody>
    </table>
    </div>
  </section>

  <section class="card" aria-labelledby="checks-title">
    <h2 id="checks-title">Verification of your nodes</h2>
    <p class="hint">The network sends each node requests shaped like client traffic and has a network node
      holding the same weights score the answers token by token. Five passes end probation; failures
      suspend the node and slash part of your stake, with the evidence listed here.</p>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">The latest verifications of your nodes, and any slash of your stake</caption>
      <thead><tr><th scope="col">Time (UTC)</th><th scope="col">Node</th><th scope="col">Check</th><th scope="col">Model</th><th scope="col" class="num">Mean log-prob</th><th scope="col" class="num">In top 8</th><th scope="col">Result</th></tr></thead>
      <tbody id="checks-body"><tr class="empty"><td colspan="7">No checks yet.</td></tr></tbody>
    </table>
    </div>
  </section>

  <section class="card" aria-labelledby="earnings-title">
    <div class="section-head">
      <h2 id="earnings-title">Earnings, last 30 days</h2>
      <p class="muted" id="earnings-totals"></p>
      <p class="muted">From client jobs; canary and verification pay go to the balance to pay out, not to these figures.</p>
    </div>
    <figure>
      <figcaption class="legend"><span><span class="swatch"></span>Earned per day (USD)</span></figcaption>
      <svg id="chart-earnings" class="chart" role="img" aria-labelledby="chart-earnings-title" viewBox="0 0 1040 220"><title id="chart-earnings-title">Earned per day</title></svg>
    </figure>
  </section>

  <div class="grid-2">
    <section class="card" aria-labelledby="link-title">
      <h2 id="link-title">Link a node</h2>
      <p class="hint">1. On the node's machine, run (it signs with the node's key that it agrees to be yours):</p>
      <div class="command">
        <pre><code id="link-command">gpumesh-node link --owner – --json</code></pre>
        <button type="button" class="copy" data-copy="link-command" aria-label="Copy the link command">Copy</button>
      </div>
      <p class="hint">2. Paste what it printed. Your wallet then signs that the node is yours, and its earlier earnings move to you.</p>
      <form id="link-form" class="form-grid">
        <div class="field span-2"><label for="link-output">Output of the command</label>
          <textarea id="link-output" name="output" rows="3" required spellcheck="false" autocomplete="off" placeholder='{"nodeId":"0x…","owner":"0x…","nodeSignature":"0x…"}'></textarea></div>
        <div><button type="submit">Sign and link</button></div>
      </form>
      <p id="link-status" class="status" role="status" aria-live="polite"></p>
    </section>

    <section class="card" aria-labelledby="payout-title">
      <h2 id="payout-title">Pay out</h2>
      <p class="hint">Sends your earnings on chain from the network's treasury. Stables pay 1 USD per token.</p>
      <form id="payout-form" class="form-grid">
        <div class="field"><label for="payout-token">Token</label>
          <select id="payout-token" name="token">${PAYOUT_TOKENS.map((token) => html`<option value="${token}">${token}</option>`)}</select></div>
        <div class="field"><label for="payout-amount">Amount (USD)</label>
          <input id="payout-amount" name="amount" inputmode="decimal" pattern="[0-9]+(\.[0-9]{1,9})?" placeholder="all" autocomplete="off"></div>
        <div class="field span-2"><label for="payout-to">To</label>
          <input id="payout-to" name="to" pattern="0x[0-9a-fA-F]{40}" placeholder="your wallet" autocomplete="off" spellcheck="false"></div>
        <div><button type="submit">Pay out</button></div>
      </form>
      <p id="payout-status" class="status" role="status" aria-live="polite"></p>
    </section>
  </div>

  <section class="card" aria-labelledby="payouts-title">
    <h2 id="payouts-title">Payouts</h2>
    <div class="table-scroll">
    <table class="data">
      <caption class="visually-hidden">Your payouts, newest first</caption>
      <thead><tr><th scope="col">Time (UTC)</th><th scope="col" class="num">Amount</th><th scope="col">Token</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Transaction</th></tr></thead>
      <tbody id="payouts-body"><tr class="empty"><td colspan="6">No payouts yet.</td></tr></tbody>
    </table>
    </div>
  </section>
  </div>`;
}

/** Tokens a payout can be made in, stables first. */
const PAYOUT_TOKENS = ['USDC.s', 'USDT.s', 'USD.s', 'native'] as const;

/** 500 → "5%", 625 → "6.25%". */
function formatBps(bps: number): string {
  return `${Number((bps / 100).toFixed(2))}%`;
}
