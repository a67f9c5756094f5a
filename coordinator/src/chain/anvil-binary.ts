import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const ARCH_NAMES: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };

/**
 * The command that runs anvil from the @foundry-rs/anvil npm package: its platform binary when
 * installed (no wrapper process between us and anvil, so signals reach it directly), else the
 * package's node wrapper. `GPUMESH_ANVIL_BIN` is honored only when passed in `env` by the caller.
 */
export function anvilCommand(env: Readonly<Record<string, string | undefined>> = {}): {
  command: string;
  prefixArgs: string[];
} {
  if (env.GPUMESH_ANVIL_BIN) return { command: env.GPUMESH_ANVIL_BIN, prefixArgs: [] };
  const require = createRequire(import.meta.url);
  const arch = ARCH_NAMES[process.arch] ?? process.arch;
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    const binary = join(dirname(require.resolve(`${platformPackage}/package.json`)), 'bin', 'anvil');
    if (existsSync(binary)) return { command: binary, prefixArgs: [] };
  } catch {
    // not installed for this platform: fall back to the wrapper below
  }
  const wrapper = join(dirname(require.resolve('@foundry-rs/anvil/package.json')), 'bin.mjs');
  return { command: process.execPath, prefixArgs: [wrapper] };
}
