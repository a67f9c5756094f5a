/** The outcome of one scenario. */
export type ScenarioResult = {
  name: string;
  status: 'pass' | 'fail' | 'skip';
  /** What the scenario checks. */
  description: string;
  /** Why it failed or was skipped. */
  detail?: string;
  durationMs: number;
};

/** The outcome of a conformance run: `ok` is false when any scenario failed. */
export type ConformanceReport = {
  target: 'node' | 'coordinator';
  ok: boolean;
  results: ScenarioResult[];
};

/** A plain-text pass/fail table for terminals. */
export function formatReport(report: ConformanceReport): string {
  const width = Math.max(8, ...report.results.map((r) => r.name.length));
  const lines = [
    `gpumesh conformance: ${report.target}`,
    `${'scenario'.padEnd(width)}  result  ms     detail`,
  ];
  for (const r of report.results) {
    const result = r.status.toUpperCase().padEnd(6);
    const ms = String(r.durationMs).padEnd(6);
    lines.push(`${r.name.padEnd(width)}  ${result}  ${ms} ${r.detail ?? r.description}`);
  }
  const count = (status: ScenarioResult['status']) =>
    report.results.filter((r) => r.status === status).length;
  lines.push(`${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped`);
  return lines.join('\n');
}
