import { describe } from 'vitest';
import { type TestBackend, testBackends } from './test-backends.js';

/**
 * Runs `suite` once per storage backend, as `<name> [sqlite]` and `<name> [postgres]`; the
 * PostgreSQL run is skipped (loudly, by the global setup) where PostgreSQL is absent.
 */
export function describeBackends(name: string, suite: (backend: TestBackend) => void): void {
  for (const backend of testBackends()) {
    describe.skipIf(backend.skip)(`${name} [${backend.name}]`, () => suite(backend));
  }
}
