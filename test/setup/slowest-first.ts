/**
 * Vitest sequencer: the files that take longest start first, so the two workers end together
 * instead of one running a five-minute file alone at the end. A fresh clone has no Vitest cache,
 * and Vitest's own order there is by file size, which says little about time (install-sh.test is
 * 390 lines and minutes long, many 390-line unit files take a second). The seconds come from
 * `slowest-files.json` (measured with `--reporter=json`, see the README); a file not listed keeps
 * Vitest's order after them. Stale figures only change the order, never what runs.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SECONDS = JSON.parse(readFileSync(new URL('./slowest-files.json', import.meta.url), 'utf8')) as Record<
  string,
  number
>;

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const seconds = (spec: TestSpecification) =>
      SECONDS[relative(this.ctx.config.root, spec.moduleId).replaceAll('\\', '/')] ?? 0;
    // Array.prototype.sort is stable: unlisted files (0) keep Vitest's order.
    return ordered.sort((a, b) => seconds(b) - seconds(a));
  }
}
