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

/**
 * Reads every servable file of `dir` and its subfolders (by extension), keyed by its path under
 * `dir` with `/` between folders (`dashboard/main.js`).
 */
export async function loadAssets(dir: string): Promise<ReadonlyMap<string, Asset>> {
  const assets = new Map<string, Asset>();
  for await (const name of listFiles(dir, '')) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = await readFile(join(dir, name));
    assets.set(name, { body, type, etag: etagOf(body) });
  }
  return assets;
}

/**
 * `assets` with the files under `folder` (`styles/`) joined, in name order and a newline apart, into
 * one asset `name` (`gpumesh.css`), which takes their place: the stylesheet is kept in parts by page
 * and component, and served as one file, as the pages link it.
 */
export function joinAssets(
  assets: ReadonlyMap<string, Asset>,
  folder: string,
  name: string,
): ReadonlyMap<string, Asset> {
  const parts = [...assets.keys()].filter((key) => key.startsWith(folder)).sort();
  const type = TYPES[extname(name)];
  if (parts.length === 0 || !type) throw new Error(`no ${folder} files to serve as ${name}`);
  const joined = new Map([...assets].filter(([key]) => !key.startsWith(folder)));
  const body = Buffer.from(parts.map((key) => assets.get(key)!.body.toString('utf8')).join('\n'));
  joined.set(name, { body, type, etag: etagOf(body) });
  return joined;
}

const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

async function* listFiles(dir: string, prefix: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const name = `${prefix}${entry.name}`;
    if (entry.isDirectory()) yield* listFiles(join(dir, entry.name), `${name}/`);
    else if (entry.isFile()) yield name;
  }
}
