// Packs @gpumesh/protocol and @gpumesh/node (each compiled by its prepack) into a folder: the
// compiled coordinator serves these to install.sh (coordinator/src/pages/node-packages.ts), and
// `npm start` packs them for its coordinator. Packs from a copy of the two package folders (no
// dist/, the checkout's node_modules linked), so the checkout's own dist/ is never rewritten while
// something else reads or packs it. The same sources pack to the same tarballs: they are kept in
// node_modules/.cache/gpumesh-node-packages/<hash of the sources>, and a second pack (npm start
// again, the next test network) copies them instead of compiling again (~20 s of both cores).
//   node scripts/pack-node-packages.mjs <dest>
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dest = resolve(process.argv[2] ?? 'dist/packages');
const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * What the tarballs are made of: every file of the two package folders but dist/ and node_modules/,
 * the build script, the base tsconfig and the TypeScript that compiles them.
 */
function sourcesHash() {
  const hash = createHash('sha256');
  const add = (file) =>
    hash
      .update(`${relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      if (entry.name === 'dist' || entry.name === 'node_modules') continue;
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.isFile()) add(join(dir, entry.name));
    }
  };
  walk(join(root, 'protocol'));
  walk(join(root, 'node'));
  for (const file of [
    'scripts/build-package.mjs',
    'tsconfig.base.json',
    'node_modules/typescript/package.json',
  ])
    add(join(root, file));
  return hash.digest('hex').slice(0, 16);
}

/** Puts the folder `from` at dest whole: a coordinator serving dest never lists a half-written tarball. */
function place(from) {
  const staged = `${dest}.${process.pid}.staged`;
  rmSync(staged, { recursive: true, force: true });
  mkdirSync(dirname(dest), { recursive: true });
  cpSync(from, staged, { recursive: true });
  rmSync(dest, { recursive: true, force: true });
  renameSync(staged, dest);
}

const cached = join(root, 'node_modules', '.cache', 'gpumesh-node-packages', sourcesHash());
if (existsSync(cached)) {
  place(cached);
  process.exit(0);
}
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
  // Packed apart, then placed whole: a coordinator serving dest never lists a tarball npm is still
  // writing (it would hash half a file, and install.sh would refuse the whole one).
  const packed = join(copy, 'packed');
  mkdirSync(packed);
  for (const folder of ['protocol', 'node']) {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', packed], {
      cwd: join(copy, folder),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  // Kept for the next pack of the same sources (moved in whole: a reader sees all of it or none),
  // then placed at dest from there.
  const staged = `${cached}.${process.pid}.staged`;
  mkdirSync(dirname(cached), { recursive: true });
  cpSync(packed, staged, { recursive: true });
  try {
    renameSync(staged, cached);
  } catch {
    rmSync(staged, { recursive: true, force: true }); // another pack of the same sources got there first
  }
  place(cached);
} finally {
  rmSync(copy, { recursive: true, force: true });
}
