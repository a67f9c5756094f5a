/**
 * The node package this coordinator was built with, served for install.sh: `npm pack` tarballs of
 * @gpumesh/protocol and @gpumesh/node (compiled JavaScript), listed with their SHA-256 at
 * `GET /install/packages.json` and served at `GET /install/packages/<file>`. A node installs from
 * the coordinator it will connect to, with nothing else reachable but npm's registry for the
 * packages' own dependencies.
 *
 * Where the tarballs come from: `nodePackagesDir` when configured; in the compiled coordinator,
 * `dist/packages/` (packed by its build); in a source checkout, packed from the checkout's
 * protocol/ and node/ on first request (about 20 s) into `<dataDir>/packages`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type NodePackage = { name: string; file: string; sha256: string; sizeBytes: number };
export type NodePackageList = { version: string; packages: NodePackage[] };

/** The two tarballs a node installs, in install order. */
const PACKAGES = [
  { name: '@gpumesh/protocol', prefix: 'gpumesh-protocol-', folder: 'protocol' },
  { name: '@gpumesh/node', prefix: 'gpumesh-node-', folder: 'node' },
] as const;

const FROM_SOURCE = import.meta.url.endsWith('.ts');

export class NodePackages {
  readonly #configured: string | undefined;
  readonly #cacheDir: string;
  #list: Promise<{ dir: string; list: NodePackageList }> | undefined;

  constructor(options: { dir?: string | undefined; dataDir: string }) {
    this.#configured = options.dir;
    this.#cacheDir = join(options.dataDir, 'packages');
  }

  /** The tarballs with their hashes (packed first, from a source checkout). */
  async list(): Promise<NodePackageList> {
    return (await this.#load()).list;
  }

  /** The bytes of one listed tarball; undefined for any other name. */
  async read(file: string): Promise<Buffer | undefined> {
    const { dir, list } = await this.#load();
    if (!list.packages.some((p) => p.file === file)) return undefined;
    return readFile(join(dir, file));
  }

  #load(): Promise<{ dir: string; list: NodePackageList }> {
    this.#list ??= this.#resolve().catch((error: unknown) => {
      this.#list = undefined; // the next request tries again
      throw error;
    });
    return this.#list;
  }

  async #resolve(): Promise<{ dir: string; list: NodePackageList }> {
    let dir = this.#configured;
    if (!dir && !FROM_SOURCE) dir = fileURLToPath(new URL('../packages/', import.meta.url));
    if (!dir) {
      dir = this.#cacheDir;
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const root = fileURLToPath(new URL('../../../', import.meta.url));
      for (const { folder } of PACKAGES) {
        await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: join(root, folder) });
      }
    }
    const files = await readdir(dir);
    const packages: NodePackage[] = [];
    for (const { name, prefix } of PACKAGES) {
      const file = files
        .filter((f) => f.startsWith(prefix) && f.endsWith('.tgz'))
        .sort()
        .at(-1);
      if (!file) throw new Error(`no ${prefix}*.tgz in ${dir}`);
      const bytes = await readFile(join(dir, file));
      packages.push({
        name,
        file,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        sizeBytes: bytes.length,
      });
    }
    const version = packages[1]!.file.slice(PACKAGES[1].prefix.length, -'.tgz'.length);
    return { dir, list: { version, packages } };
  }
}
