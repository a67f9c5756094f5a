import { ConformanceSkip } from './failure.js';
import type { ScenarioResult } from './report.js';

type Scenario<C> = {
  name: string;
  description: string;
  needs: readonly string[];
  run(context: C): Promise<void>;
};

/**
 * Runs scenarios in order. Each gets its context from `open` and `close` tidies it up; a scenario
 * whose prerequisite did not pass is skipped. Every throw is a failure, never a crash.
 */
export async function runScenarios<C>(
  scenarios: readonly Scenario<C>[],
  open: (scenario: Scenario<C>) => Promise<C>,
  close: (context: C) => Promise<void>,
  onResult?: (result: ScenarioResult) => void,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    const started = Date.now();
    const result = (status: ScenarioResult['status'], detail?: string): ScenarioResult => ({
      name: scenario.name,
      status,
      description: scenario.description,
      ...(detail === undefined ? {} : { detail }),
      durationMs: Date.now() - started,
    });
    const unmet = scenario.needs.find((need) => results.find((r) => r.name === need)?.status !== 'pass');
    let outcome: ScenarioResult;
    if (unmet && results.some((r) => r.name === unmet)) {
      outcome = result('skip', `needs ${unmet}, which did not pass`);
    } else {
      let context: C | undefined;
      try {
        context = await open(scenario);
        await scenario.run(context);
        outcome = result('pass');
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        outcome = result(error instanceof ConformanceSkip ? 'skip' : 'fail', message);
      } finally {
        if (context !== undefined) await close(context).catch(() => undefined);
      }
    }
    results.push(outcome);
    onResult?.(outcome);
  }
  return results;
}
