import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** test/artifacts/ (git-ignored): screenshots of the browser tests. */
export const ARTIFACTS_DIR = fileURLToPath(new URL('../artifacts/', import.meta.url));

/** Path of a file under {@link ARTIFACTS_DIR}, creating the folder. */
export function artifactPath(name: string): string {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return `${ARTIFACTS_DIR}${name}`;
}
