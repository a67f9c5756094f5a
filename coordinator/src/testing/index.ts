/** Test helpers for coordinator tests (and cross-package tests in test/). Not for production code. */
export { createTestApp, type TestApp } from './create-test-app.js';
export { describeBackends } from './describe-backends.js';
export { expectBooksBalanced } from './expect-books-balanced.js';
export { fundedApiKey } from './funded-key.js';
export { signIn } from './sign-in.js';
export { sumOfEntries } from './sum-of-entries.js';
export { type TestBackend, type TestDatabase, testBackends } from './test-backends.js';
export { createTestClock, type TestClock } from './test-clock.js';
export { until } from './until.js';
