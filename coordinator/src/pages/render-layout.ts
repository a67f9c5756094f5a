import { html, type SafeHtml } from './html.js';

/** URL prefix of the pages' static files (scripts, stylesheet, icon). */
export const ASSETS_PREFIX = '/assets';

export type LayoutOptions = {
  readonly title: string;
  readonly current: 'network' | 'dashboard';
  /** Path under {@link ASSETS_PREFIX} of the page's script. */
  readonly script: string;
  /** The script is an ES module (`type="module"`, deferred like the classic ones). */
  readonly module?: boolean;
  /**
   * Paths under {@link ASSETS_PREFIX} of the modules the script imports: preloaded in parallel
   * (`modulepreload`) rather than found one import after another.
   */
  readonly preload?: readonly string[];
  readonly main: SafeHtml;
  /** `data-*` attributes of <body>: the page script reads its settings there (no inline script). */
  readonly data?: Readonly<Record<string, string>>;
};

/** The document every page shares: header with navigation, the page's main, its one script. */
export function renderLayout(options: LayoutOptions): string {
  const script = options.module
    ? html`<script type="module" src="${ASSETS_PREFIX}/${options.script}"></script>`
    : html`<script src="${ASSETS_PREFIX}/${options.script}" defer></script>`;
  const preload = (options.preload ?? []).map(
    (path) => html`\n<link rel="modulepreload" href="${ASSETS_PREFIX}/${path}">`,
  );
  const data = Object.entries(options.data ?? {}).map(([key, value]) => html` data-${key}="${value}"`);
  const link = (href: string, page: LayoutOptions['current'], label: string) =>
    options.current === page
      ? html`<a href="${href}" aria-current="page">${label}</a>`
      : html`<a href="${href}">${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · gpumesh</title>
<link rel="icon" href="${ASSETS_PREFIX}/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS_PREFIX}/gpumesh.css">
<script src="${ASSETS_PREFIX}/copy.js" defer></script>
${script}${preload}
</head>
<body${data}>
<a class="skip" href="#main">Skip to content</a>
<header class="site">
  <div class="wrap">
    <a class="brand" href="/network"><img src="${ASSETS_PREFIX}/favicon.svg" alt="" width="24" height="24"> gpumesh</a>
    <nav aria-label="Main">${link('/network', 'network', 'Network')}${link('/dashboard', 'dashboard', 'Dashboard')}</nav>
  </div>
</header>
<main id="main" class="wrap">
${options.main}
</main>
<footer class="site"><div class="wrap">gpumesh — an open network for paid AI inference. Testnet, chain id 800000.</div></footer>
</body>
</html>
`.value;
}
