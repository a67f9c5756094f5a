/**
 * Vitest global setup: every process the suite starts carries a marker in its environment
 * (`GPUMESH_TEST_RUN`, inherited by workers and everything they spawn, detached ones too). At the
 * end the teardown looks for live processes that carry it: a test that left one running (a node,
 * anvil, a Python example) fails the run under CI, and is named either way.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** How long processes a test just stopped get to finish exiting. */
const GRACE_MS = 10_000;

export default function setup(): () => Promise<void> {
  const marker = `GPUMESH_TEST_RUN=${process.pid}-${Date.now()}`;
  process.env.GPUMESH_TEST_RUN = marker.slice(marker.indexOf('=') + 1);
  return async function teardown() {
    let left = survivors(marker);
    for (const end = Date.now() + GRACE_MS; left.length > 0 && Date.now() < end; left = survivors(marker))
      await new Promise((resolve) => setTimeout(resolve, 200));
    if (left.length === 0) return;
    const line = `gpumesh tests: ${left.length} process(es) the suite started are still running:\n${left.join('\n')}`;
    if (process.env.CI === 'true') throw new Error(line);
    console.warn(`\n${line}\n`);
  };
}

/** Live processes (not zombies, not Vitest's own) whose environment holds `marker`. */
function survivors(marker: string): string[] {
  if (process.platform !== 'linux') return [];
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    if (Number(pid) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker)) continue;
      const state = readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /, '')[0];
      if (state === 'Z') continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
      if (/vitest/.test(command)) continue;
      out.push(`  ${pid} ${command.slice(0, 200)}`);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return out;
}
