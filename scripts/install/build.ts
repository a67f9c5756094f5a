/**
 * install.sh, the node installer users run as one file (`curl -fsSL <app_url>/install.sh | sh`), is
 * generated from its parts here, scripts/install/*.sh: joined in name order, a blank line apart,
 * under the shebang and a line saying so. Edit the parts, then `npm run install-sh` writes
 * install.sh; scripts/install/build.test.ts fails while the committed file differs.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const PARTS_DIR = import.meta.dirname;
export const INSTALL_SH = path.join(PARTS_DIR, '..', '..', 'install.sh');

/** The text of install.sh, from the parts as they are now. */
export function buildInstallScript(): string {
  const parts = readdirSync(PARTS_DIR)
    .filter((name) => name.endsWith('.sh'))
    .sort()
    .map((name) => readFileSync(path.join(PARTS_DIR, name), 'utf8'));
  const header = [
    '#!/bin/sh',
    '# GENERATED from scripts/install/*.sh by scripts/install/build.ts (npm run install-sh): edit those.',
  ];
  return `${header.join('\n')}\n${parts.join('\n')}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  writeFileSync(INSTALL_SH, buildInstallScript());
  console.log(`wrote ${path.relative(process.cwd(), INSTALL_SH)}`);
}
