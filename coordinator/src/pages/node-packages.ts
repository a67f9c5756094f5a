/**
 * The node package this coordinator was built with, served for install.sh: `npm pack` tarballs of
 * @gpumesh/protocol and @gpumesh/node (compiled JavaScript), listed with their SHA-256 at
 * `GET /install/packages.json` and served at `GET /install/packages/<file>`. A node installs from
 * the coordinator it will connect to, with nothing else reachable but npm's registry for the
 * packages' own dependencies.
 *
 * Where the tarballs come from: `nodePackagesDir` when configured (`npm start` packs them there,
 * scripts/pack-node-packages.mjs); in the compiled coordinator, `dist/packages/` (packed by its
 * build). A coordinator run from the sources without `nodePackagesDir` serves none (404): install
 * with `--from <checkout>` there. Tarballs not there yet (still being packed) are a 503.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../errors.js';

export type NodePackage = { name: string; file: string; sha256: string; sizeBytes: number };
export type NodePackageList = { version: string; packages: NodePackage[] };

/** The two tarballs a node installs, in install order. */
const PACKAGES = [
  { name: '@gpumesh/protocol', prefix: 'gpumesh-protocol-', folder: 'protocol' },
  { name: '@gpumesh/node', prefix: 'gpumesh-node-', folder: 'node' },
] as const;

const FROM_SOURCE = import.meta.url.endsWith('.ts');

export class NodePackages {
  readonly #dir: string | undefined;
  #list: Promise<{ dir: string; list: NodePackageList }> | undefined;

  constructor(options: { dir?: string | undefined }) {
    this.#dir =
      options.dir ?? (FROM_SOURCE ? undefined : fileURLToPath(new URL('../packages/', import.meta.url)));
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
    const dir = this.#dir;
    if (!dir) {
      throw new ApiError(
        'not_found',
        'This coordinator runs from the sources and serves no node package: set nodePackagesDir, or install with --from <checkout>.',
      );
    }
    const files = await readdir(dir).catch(() => [] as string[]);
    if (!PACKAGES.every(({ prefix }) => files.some((f) => f.startsWith(prefix) && f.endsWith('.tgz')))) {
      throw new ApiError('not_ready', 'The node package is being prepared; retry in a few seconds.', {
        retryAfterS: 5,
      });
    }
    const packages: NodePackage[] = [];
    for (const { name, prefix } of PACKAGES) {
      const file = files
        .filter((f) => f.startsWith(prefix) && f.endsWith('.tgz'))
        .sort()
        .at(-1)!;
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
