/**
 * What `gpumesh-node --help` and `<command> --help` load: the real command, run from the sources
 * as a checkout runs it (bin/ → tsx), with a module hook that records every module URL it resolves
 * or loads. Help must load the parser and the help text only: no command module, no dependency but
 * the TypeScript loader itself (tsx, esbuild), so no node-llama-cpp, ws, viem or systeminformation.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMMAND_HELP } from './cli/usage.js';

const run = promisify(execFile);
const NODE_DIR = join(import.meta.dirname, '..');
const BIN = join(NODE_DIR, 'bin', 'gpumesh-node.js');
/** The node package's modules help may load: the entry, the parser, the help text and what they import. */
const HELP_MODULES = ['cli.ts', 'cli/parse-args.ts', 'cli/usage.ts', 'config-flags.ts', 'errors.ts'];
/** A source checkout runs the command through tsx, which loads esbuild. */
const LOADER_PACKAGES = ['esbuild', 'tsx'];

// Module hooks run on their own thread: each load is appended to the file named at registration.
const HOOKS = `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(out, result.url + '\\n');
  return result;
}
export async function load(url, context, nextLoad) {
  appendFileSync(out, url + '\\n');
  return nextLoad(url, context);
}
`;
const REGISTER = `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url, { data: { out: process.env.GPUMESH_TEST_LOADED } });
`;

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gm-cli-help-'));
  await writeFile(join(dir, 'hooks.mjs'), HOOKS);
  await writeFile(join(dir, 'register.mjs'), REGISTER);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Loaded = { code: number; stdout: string; packages: string[]; nodeModules: string[] };

/** Runs `gpumesh-node …args` from the sources; what it printed and the modules it loaded. */
async function runRecorded(args: string[]): Promise<Loaded> {
  const out = join(dir, `${args.join('_').replace(/[^\w.-]/g, '-')}.txt`);
  await writeFile(out, '');
  // execFile waits for the child to exit (or kills it at the timeout): nothing is left running.
  const result = await run(process.execPath, ['--import', join(dir, 'register.mjs'), BIN, ...args], {
    env: { ...process.env, GPUMESH_TEST_LOADED: out },
    timeout: 60_000,
  }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '' }),
  );
  const files = [
    ...new Set(
      (await readFile(out, 'utf8'))
        .split('\n')
        .filter((url) => url.startsWith('file:'))
        .map((url) => fileURLToPath(url.split('?')[0]!)),
    ),
  ];
  const packages = files
    .map((file) => /[/\\]node_modules[/\\]((?:@[^/\\]+[/\\])?[^/\\]+)/.exec(file)?.[1])
    .filter((name): name is string => name !== undefined);
  const nodeModules = files
    .filter((file) => file.startsWith(join(NODE_DIR, 'src')))
    .map((file) => relative(join(NODE_DIR, 'src'), file).replaceAll('\\', '/'));
  return { ...result, packages: [...new Set(packages)].sort(), nodeModules: nodeModules.sort() };
}

describe('gpumesh-node --help', () => {
  test('behavior: --help loads the parser and the help text only, and ends with a newline', async () => {
    const loaded = await runRecorded(['--help']);
    expect(loaded.code).toBe(0);
    expect(loaded.stdout).toMatch(/^Usage: gpumesh-node <command>[\s\S]*[^\n]\n$/);
    // The recorder sees the TypeScript sources and the packages (tsx's own modules included).
    expect(loaded.nodeModules).toContain('cli.ts');
    expect(loaded.packages).toContain('tsx');
    expect(loaded.nodeModules.filter((file) => !HELP_MODULES.includes(file))).toEqual([]);
    expect(loaded.packages.filter((name) => !LOADER_PACKAGES.includes(name))).toEqual([]);
  }, 60_000);

  test('behavior: every <command> --help prints its usage, loads no command and ends with a newline', async () => {
    const names = Object.keys(COMMAND_HELP);
    const results: [string, Loaded][] = [];
    // Two at a time: each is a Node.js process compiling TypeScript.
    for (let i = 0; i < names.length; i += 2) {
      const batch = names.slice(i, i + 2);
      results.push(
        ...(await Promise.all(
          batch.map(
            async (name) => [name, await runRecorded([...name.split(' '), '--help'])] as [string, Loaded],
          ),
        )),
      );
    }
    for (const [name, loaded] of results) {
      expect({ name, code: loaded.code }).toEqual({ name, code: 0 });
      expect(loaded.stdout).toMatch(
        new RegExp(`^Usage: gpumesh-node ${name} \\[flags\\]\\n[\\s\\S]*[^\\n]\\n$`),
      );
      expect({ name, modules: loaded.nodeModules.filter((file) => !HELP_MODULES.includes(file)) }).toEqual({
        name,
        modules: [],
      });
      expect({ name, packages: loaded.packages.filter((p) => !LOADER_PACKAGES.includes(p)) }).toEqual({
        name,
        packages: [],
      });
    }
  }, 120_000);

  test('behavior: the recorder sees a command load its runtime (models info reads GGUF through node-llama-cpp)', async () => {
    const loaded = await runRecorded(['models', 'info', 'absent.gguf', '--models-dir', join(dir, 'models')]);
    expect(loaded.code).toBe(1);
    expect(loaded.nodeModules).toContain('cli/models-info.ts');
    expect(loaded.packages).toEqual(expect.arrayContaining(['node-llama-cpp', 'systeminformation']));
  }, 60_000);
});
