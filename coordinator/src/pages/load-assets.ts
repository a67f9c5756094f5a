import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';

/** A static file of the pages, held in memory (the whole set is a few tens of kilobytes). */
export type Asset = { readonly body: Buffer; readonly type: string; readonly etag: string };

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Reads every servable file of `dir` (by extension), keyed by file name. */
export async function loadAssets(dir: string): Promise<ReadonlyMap<string, Asset>> {
  const assets = new Map<string, Asset>();
  for (const name of await readdir(dir)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = await readFile(join(dir, name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(name, { body, type, etag });
  }
  return assets;
}
