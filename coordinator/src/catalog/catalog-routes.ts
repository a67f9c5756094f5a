import { createReadStream } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { type CatalogModel, CatalogSchema } from './catalog.js';
import { heldCatalogFiles } from './held-files.js';

/** How long clients and proxies may keep the catalog (it changes with a coordinator release). */
const CATALOG_MAX_AGE_S = 300;

/**
 * `GET /api/models/catalog`: the canonical model ids this coordinator lists known weights under,
 * with each model's GGUF files (quantisation, size, SHA-256, where to download it) and a
 * suggested price band. Public: node owners read it to pick and verify files (`gpumesh-node
 * models pull <id>`). `GET /api/models/files/<file>`: a catalog file this coordinator holds (its
 * own verifier's weights, `trust.verifierModelsDir`), with Range requests so a pull resumes.
 */
export async function catalogRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  /** The path of catalog file `name` when this coordinator holds it (by content, any file name). */
  const held = heldCatalogFiles(
    ctx.config.trust.verifierModelsDir,
    ctx.catalog.models.flatMap((m) => m.files),
  );

  app.get(
    '/api/models/catalog',
    {
      schema: {
        summary: 'The model catalog: canonical ids and their known GGUF files (SHA-256, download URL)',
        tags: ['models'],
        response: { 200: CatalogSchema },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${CATALOG_MAX_AGE_S}`);
      const models: CatalogModel[] = [];
      for (const model of ctx.catalog.models) {
        const files = [];
        for (const f of model.files) {
          const url = (await held(f.file))
            ? new URL(`/api/models/files/${encodeURIComponent(f.file)}`, ctx.config.publicUrl).href
            : f.url;
          files.push({ ...f, ...(url ? { url } : {}) });
        }
        models.push({ ...model, files });
      }
      return { models };
    },
  );

  app.get(
    '/api/models/files/:file',
    {
      schema: {
        summary: 'A catalog GGUF file this coordinator holds (Range requests resume a pull)',
        tags: ['models'],
        params: Type.Object(
          { file: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const name = (request.params as { file: string }).file;
      const found = await held(name);
      if (!found)
        throw new ApiError('not_found', `This coordinator does not serve "${name}".`, { param: 'file' });
      const range = parseRange(request.headers.range, found.size);
      reply.header('accept-ranges', 'bytes').header('content-type', 'application/octet-stream');
      if (range === 'unsatisfiable') {
        return reply.code(416).header('content-range', `bytes */${found.size}`).send();
      }
      const { start, end } = range ?? { start: 0, end: found.size - 1 };
      if (range) reply.code(206).header('content-range', `bytes ${start}-${end}/${found.size}`);
      reply.header('content-length', String(end - start + 1));
      return reply.send(createReadStream(found.file, { start, end }));
    },
  );
}

/** One `bytes=a-b` (or `a-`, `-n`) range of a `size`-byte file; undefined for none or another unit. */
function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start > end || start >= size ? 'unsatisfiable' : { start, end };
}
