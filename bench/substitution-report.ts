/** The substitution study's tables (bench/substitution.ts), as Markdown for bench/RESULTS.md. */

type Statistic = {
  convictedAt: number;
  tokens: number;
  curve: { checks: number; probability: number }[];
};
export type LiarCell = {
  liar: string;
  setting: string;
  checks: number;
  tokens: number;
  meanLogE: number;
  ratioPerToken: number[];
  current: Statistic;
  proposed: Statistic;
};
type HonestStatistic = {
  convictions: number;
  worst: number;
  highest: number;
  overFivePercent: number;
  threshold?: number;
};
export type HonestRow = {
  quant: string;
  checks: number;
  scored: number;
  tokens: number;
  empty: number;
  skipped: number;
  failed: unknown[];
  current: HonestStatistic;
  proposed: HonestStatistic;
};

const thousands = (n: number) => n.toLocaleString('en-US');

/** "3 (71 tokens)", or "> 60 (1,502 tokens)" when the run ended unconvicted. */
function until(s: Statistic, cell: LiarCell): string {
  if (s.convictedAt > 0) return `${s.convictedAt} (${thousands(s.tokens)} tokens)`;
  return `> ${cell.checks} (${thousands(cell.tokens)} tokens)`;
}

function curve(s: Statistic): string {
  return s.curve.map((p) => `${Math.round(100 * p.probability)}`).join(' / ');
}

export function liarTable(cells: LiarCell[], unmeasured: string[]): string {
  const checks = cells[0]?.current.curve.map((p) => p.checks).join(' / ') ?? '';
  const lines = [
    '| Liar (claims the F16 file) | Jobs | Checks (tokens) until conviction: current | proposed | current ln E a check | ln q/p a token: Q8_0 / Q4_0 | P(convicted within ' +
      `${checks} checks), %: current | proposed |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const c of cells) {
    lines.push(
      `| ${c.liar} | ${c.setting} | ${until(c.current, c)} | ${until(c.proposed, c)} | ${c.meanLogE.toFixed(2)} | ${c.ratioPerToken.map((x) => x.toFixed(3)).join(' / ')} | ${curve(c.current)} | ${curve(c.proposed)} |`,
    );
  }
  for (const name of unmeasured) lines.push(`| ${name} | — | not measured | not measured | — | — | — | — |`);
  return lines.join('\n');
}

export function honestTable(rows: HonestRow[]): string {
  const lines = [
    '| Honest node | Checks (scored) | Tokens | Empty answers | Failed outright | Convictions: current / proposed | Alone over a 5 % test: current / proposed | Worst ln E: current / proposed | Highest running evidence: current (of 25.3) / proposed (of 26.4) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const pair = (f: (s: HonestStatistic) => number | string) => `${f(r.current)} / ${f(r.proposed)}`;
    lines.push(
      `| ${r.quant} under its own claim | ${thousands(r.checks)} (${thousands(r.scored)}) | ${thousands(r.tokens)} | ${r.empty} | ${r.failed.length} | ${pair((s) => s.convictions)} | ${pair((s) => s.overFivePercent)} | ${r.scored === 0 ? '—' : pair((s) => s.worst.toFixed(2))} | ${pair((s) => s.highest.toFixed(2))} |`,
    );
  }
  return lines.join('\n');
}
