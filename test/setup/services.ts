/**
 * Vitest global setup: finds the local PostgreSQL and Redis that tests run against.
 *
 * On a developer machine without them, their tests skip with a loud notice. Under CI (`CI=true`)
 * they are mandatory: a missing service fails the run before any test starts.
 */
import { probeServices } from '../support/services.js';

export default async function setup(): Promise<void> {
  const found = await probeServices();
  const missing = Object.entries(found)
    .filter(([, url]) => !url)
    .map(([name]) => name);
  if (missing.length > 0) {
    const line = `gpumesh tests: ${missing.join(' and ')} not reachable`;
    if (process.env.CI === 'true') throw new Error(`${line}; CI requires them (see .ci/run)`);
    const bar = '!'.repeat(line.length + 30);
    console.warn(`\n${bar}\n${line} — their tests are SKIPPED\n${bar}\n`);
  }
  process.env.GPUMESH_TEST_PG_URL = found.postgres ?? '';
  process.env.GPUMESH_TEST_REDIS_URL = found.redis ?? '';
}
