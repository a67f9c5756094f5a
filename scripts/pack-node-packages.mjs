// Packs @gpumesh/protocol and @gpumesh/node (each compiled by its prepack) into a folder: the
// compiled coordinator serves these to install.sh (coordinator/src/pages/node-packages.ts).
//   node ../scripts/pack-node-packages.mjs dist/packages   (from coordinator/)
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';

const dest = resolve(process.argv[2] ?? 'dist/packages');
const root = new URL('../', import.meta.url);
rmSync(dest, { recursive: true, force: true });
mkdirSync(dest, { recursive: true });
for (const folder of ['protocol', 'node']) {
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dest], {
    cwd: new URL(`${folder}/`, root),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
