// Packs @gpumesh/protocol and @gpumesh/node (each compiled by its prepack) into a folder: the
// compiled coordinator serves these to install.sh (coordinator/src/pages/node-packages.ts), and
// `npm start` packs them for its coordinator. Packs from a copy of the two package folders (no
// dist/, the checkout's node_modules linked), so the checkout's own dist/ is never rewritten while
// something else reads or packs it.
//   node scripts/pack-node-packages.mjs <dest>
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dest = resolve(process.argv[2] ?? 'dist/packages');
const root = fileURLToPath(new URL('../', import.meta.url));
const copy = mkdtempSync(join(tmpdir(), 'gpumesh-node-packages-'));
try {
  for (const folder of ['protocol', 'node']) {
    cpSync(join(root, folder), join(copy, folder), {
      recursive: true,
      filter: (source) => !/[/\\](dist|node_modules)$/.test(source),
    });
  }
  mkdirSync(join(copy, 'scripts'));
  cpSync(join(root, 'scripts', 'build-package.mjs'), join(copy, 'scripts', 'build-package.mjs'));
  cpSync(join(root, 'tsconfig.base.json'), join(copy, 'tsconfig.base.json'));
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
  // Packed beside dest, then moved into place: a coordinator serving dest never lists a tarball
  // npm is still writing (it would hash half a file, and install.sh would refuse the whole one).
  const packed = join(copy, 'packed');
  mkdirSync(packed);
  for (const folder of ['protocol', 'node']) {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', packed], {
      cwd: join(copy, folder),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dirname(dest), { recursive: true });
  try {
    renameSync(packed, dest);
  } catch {
    cpSync(packed, dest, { recursive: true }); // another file system than the temporary folder's
  }
} finally {
  rmSync(copy, { recursive: true, force: true });
}
