/** A conformance check that did not hold; its message is what the report shows. */
export class ConformanceFailure extends Error {
  override readonly name = 'ConformanceFailure';
}

/** A scenario that cannot run (a prerequisite is missing); the report shows it as skipped. */
export class ConformanceSkip extends Error {
  override readonly name = 'ConformanceSkip';
}

/** Fails the scenario with `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}
