#!/usr/bin/env node
/**
 * Makes package-lock.json usable by `npm ci` on machines whose npm registry mirror carries only some
 * platforms' builds of a package (seen here: @biomejs/cli-darwin-arm64 stops at 2.5.15 while
 * 2.6.8 is current). npm install then leaves those optional platform packages out of the lock, and
 * `npm ci` refuses the lock as "out of sync". This script adds each missing optional platform entry
 * with its os/cpu read from the package name, so `npm ci` sees the lock in sync and skips them as
 * foreign platforms, exactly as it would with a complete lock.
 *
 * Run after any `npm install` that changes the lock: `npm run lock:fix`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const OS = {
  darwin: 'darwin',
  mac: 'darwin',
  linux: 'linux',
  win32: 'win32',
  win: 'win32',
  android: 'android',
  freebsd: 'freebsd',
  openbsd: 'openbsd',
  netbsd: 'netbsd',
  sunos: 'sunos',
  aix: 'aix',
  openharmony: 'openharmony',
};
const CPU = [
  'x64',
  'arm64',
  'ia32',
  'arm',
  'armv7l',
  'riscv64',
  'ppc64',
  's390x',
  'loong64',
  'mips64el',
  'wasm32',
];

/** os and cpu of a platform package, from its name (e.g. @biomejs/cli-linux-x64-musl). */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.map((p) => OS[p]).find(Boolean);
  const cpuPart = parts.find((p) => CPU.includes(p));
  if (!os || !cpuPart) return null;
  const cpu = cpuPart === 'armv7l' ? 'arm' : cpuPart;
  const libc = parts.includes('musl')
    ? ['musl']
    : parts.includes('gnu') && os === 'linux'
      ? ['glibc']
      : undefined;
  return { os: [os], cpu: [cpu], ...(libc ? { libc } : {}) };
}

const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const pkgs = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(pkgs)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    // npm resolves a dependency from the nearest node_modules up the tree.
    const segments = path ? path.split('/node_modules/') : [];
    let found = false;
    for (let i = segments.length; i >= 0 && !found; i--) {
      const base = segments.slice(0, i).join('/node_modules/');
      found = `${base ? `${base}/` : ''}node_modules/${dep}` in pkgs;
    }
    if (found) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(spec)) continue;
    pkgs[`node_modules/${dep}`] = { version: spec, optional: true, ...platform };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`fix-lock: added ${added} foreign-platform optional entries`);
