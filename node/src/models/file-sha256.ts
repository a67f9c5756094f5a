import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

type Cached = { size: number; mtimeMs: number; sha256: string };

/**
 * The SHA-256 (lowercase hex) of a file, streamed. With `cacheFile`, a hash is remembered by path,
 * size and modification time, so a node restarting with multi-gigabyte GGUFs hashes each once.
 */
export async function fileSha256(path: string, cacheFile?: string): Promise<string> {
  const info = await stat(path);
  const size = info.size;
  // To the millisecond: what every filesystem and copy tool keeps.
  const mtimeMs = Math.round(info.mtimeMs);
  const cache = cacheFile ? await readCache(cacheFile) : {};
  const known = cache[path];
  if (known && known.size === size && known.mtimeMs === mtimeMs) return known.sha256;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  const sha256 = hash.digest('hex');
  if (cacheFile) {
    cache[path] = { size, mtimeMs, sha256 };
    await mkdir(dirname(cacheFile), { recursive: true });
    await writeFile(cacheFile, JSON.stringify(cache), { mode: 0o600 });
  }
  return sha256;
}

async function readCache(cacheFile: string): Promise<Record<string, Cached>> {
  try {
    const parsed = JSON.parse(await readFile(cacheFile, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, Cached>) : {};
  } catch {
    return {}; // absent or unreadable: hash again
  }
}
