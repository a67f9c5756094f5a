import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CatalogModel } from './catalog.js';

type CatalogFile = CatalogModel['files'][number];

/**
 * The catalog files a folder holds, found by content rather than by name: a file of the catalog
 * entry's size whose SHA-256 is the entry's. The coordinator's verifier folder names its files as
 * the operator (or `npm start`) wrote them, so `gpumesh-tiny.gguf` may be `tiny-44136fa3….gguf`
 * there. Each candidate is hashed once per (path, size, mtime); only files of an entry's exact
 * size are hashed at all.
 */
export function heldCatalogFiles(
  dir: string | undefined,
  files: readonly CatalogFile[],
): (name: string) => Promise<{ file: string; size: number } | undefined> {
  const byName = new Map(files.map((f) => [f.file, f]));
  const hashes = new Map<string, Promise<string | undefined>>();
  const hashOf = (file: string, size: number, mtimeMs: number) => {
    const key = `${file}\0${size}\0${mtimeMs}`;
    let hash = hashes.get(key);
    if (!hash) {
      hash = sha256File(file).catch(() => undefined);
      hashes.set(key, hash);
    }
    return hash;
  };

  return async (name) => {
    const entry = byName.get(name);
    if (!dir || !entry?.sha256 || name !== path.basename(name)) return undefined;
    const names = await readdir(dir).catch(() => [] as string[]);
    // The catalog's own name first: the usual layout, and the cheapest to confirm.
    names.sort((a, b) => Number(b === name) - Number(a === name));
    for (const candidate of names) {
      const file = path.join(dir, candidate);
      const info = await stat(file).catch(() => undefined);
      if (!info?.isFile() || info.size !== entry.sizeBytes) continue;
      if ((await hashOf(file, info.size, info.mtimeMs)) === entry.sha256) return { file, size: info.size };
    }
    return undefined;
  };
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
