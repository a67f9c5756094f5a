/**
 * The model catalog: canonical model ids (`vendor/model`, OpenRouter-style) with the GGUF files
 * known to hold each model's weights, by SHA-256. A node's offer carries the hash of the file it
 * serves (NODE_PROTOCOL.md "Model identity"): a known hash is listed and routed under the
 * catalog's id, whatever the node called it, so every node serving the same weights competes on
 * price under one id; an unknown hash only under a node-scoped id, `<nodeId>/<name>`, shown as
 * unverified. The catalog ships as models.json beside this file (or `catalogFile`).
 *
 * A file whose hash is not pinned yet (no `sha256`: the publisher's metadata could not be read
 * where the catalog was written) is listed so owners can find and pull it, but it names no
 * weights: a node serving it is listed under its own scope until an operator pins the hash.
 */
import { readFileSync } from 'node:fs';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ApiError } from '../errors.js';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const Decimal = Type.String({ pattern: '^[0-9]{1,30}$' });
export const CatalogModelSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*$', maxLength: 128 }),
    name: Type.String({ maxLength: 200 }),
    family: Type.Union(['chat', 'text', 'embedding', 'vision', 'voice'].map((f) => Type.Literal(f))),
    contextLength: Type.Integer({ minimum: 1 }),
    /** The id of this model's pooled embeddings, when a node offers them from the same file. */
    embeddingId: Type.Optional(Type.String({ maxLength: 128 })),
    /** When the weights were published (UTC date): `created` in /api/v1/models, as OpenRouter's. */
    created: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
    /** The parameter count as its publisher states it ("0.5B", "70B"). */
    parameters: Type.Optional(Type.String({ maxLength: 16 })),
    /** The weights' licence: its name (SPDX where there is one) and the publisher's text. */
    licence: Type.Optional(
      Type.Object(
        { name: Type.String({ maxLength: 100 }), url: Type.String({ pattern: '^https://', maxLength: 500 }) },
        { additionalProperties: false },
      ),
    ),
    /** The publisher's page for these weights (where the facts above are cited from). */
    source: Type.Optional(Type.String({ pattern: '^https://', maxLength: 500 })),
    /** What an owner should know to serve it (e.g. the runtime it needs). */
    note: Type.Optional(Type.String({ maxLength: 500 })),
    files: Type.Array(
      Type.Object(
        {
          quant: Type.String({ maxLength: 32 }),
          file: Type.String({ maxLength: 200 }),
          /** Exact when the hash is pinned; else the size the publisher lists, rounded. */
          sizeBytes: Type.Integer({ minimum: 1 }),
          /** The file's SHA-256; absent while not pinned (the file is then unverified). */
          sha256: Type.Optional(Sha256),
          /**
           * The memory it takes to serve with a 4,096-token context: weights, f16 KV cache and a
           * tenth for compute buffers (coordinator/README "The model catalog an owner picks from"). `models recommend` fits it.
           */
          memoryBytes: Type.Optional(Type.Integer({ minimum: 1 })),
          /**
           * Where the file downloads from: the publisher's own URL in models.json, or this
           * coordinator's /api/models/files/<file> when it holds the file (catalog-routes.ts).
           */
          url: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 1000 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 64 },
    ),
    /** A suggested price band per million tokens, nanousd: [low, high]. */
    priceBand: Type.Object(
      {
        inputPerMTok: Type.Array(Decimal, { minItems: 2, maxItems: 2 }),
        outputPerMTok: Type.Array(Decimal, { minItems: 2, maxItems: 2 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export const CatalogSchema = Type.Object(
  { models: Type.Array(CatalogModelSchema, { maxItems: 10_000 }) },
  { additionalProperties: false },
);
export type CatalogModel = Static<typeof CatalogModelSchema>;

/** What a node offers, as far as its identity goes. */
export type OfferIdentity = { id: string; family: string; sha256?: string | undefined };

export class Catalog {
  readonly models: readonly CatalogModel[];
  readonly #byHash = new Map<string, CatalogModel>();
  readonly #quantByHash = new Map<string, string>();
  readonly #ids = new Set<string>();

  constructor(models: readonly CatalogModel[]) {
    this.models = models;
    for (const model of models) {
      this.#ids.add(model.id);
      if (model.embeddingId) this.#ids.add(model.embeddingId);
      for (const file of model.files) {
        if (!file.sha256) continue;
        this.#byHash.set(file.sha256, model);
        this.#quantByHash.set(file.sha256, file.quant);
      }
    }
  }

  /** The catalog model whose weights have this hash. */
  byHash(sha256: string): CatalogModel | undefined {
    return this.#byHash.get(sha256);
  }

  /** The GGUF type (`Q4_K_M`, `F16`, …) of the file with this hash, as the catalog records it. */
  quantOf(sha256: string): string | undefined {
    return this.#quantByHash.get(sha256);
  }

  /**
   * The other pinned files of the model whose weights have this hash that are smaller than it — its
   * cheaper quantizations (an F16's Q8_0 and Q4_0), largest first: what a node could serve behind
   * this claim at less cost (trust/checks/substitution-ratio.ts). By the catalog's own sizes, so a
   * retrained model's files are related by its entry alone.
   */
  cheaperThan(sha256: string): { quant: string; sha256: string }[] {
    const model = this.#byHash.get(sha256);
    const claimed = model?.files.find((f) => f.sha256 === sha256);
    if (!model || !claimed) return [];
    return model.files
      .filter((f) => f.sha256 !== undefined && f.sizeBytes < claimed.sizeBytes)
      .sort((a, b) => b.sizeBytes - a.sizeBytes)
      .map((f) => ({ quant: f.quant, sha256: f.sha256! }));
  }

  /**
   * The id a node's offer is listed and routed under: the catalog's canonical id for a known
   * hash (its embedding id for an embedding offer); `<nodeId>/<id>` for an unknown hash, or for
   * an unhashed offer claiming a catalog id; the node's own id for an unhashed offer the catalog
   * does not name (a relay runtime's upstream model: unverified, first-come).
   */
  listedId(offer: OfferIdentity, nodeId: string): string {
    const scoped = `${nodeId.toLowerCase()}/${offer.id}`;
    if (!offer.sha256) return this.#ids.has(offer.id) ? scoped : offer.id;
    const model = this.#byHash.get(offer.sha256);
    if (!model) return scoped;
    if (offer.family === 'embedding' && model.family !== 'embedding') return model.embeddingId ?? scoped;
    return model.id;
  }
}

/** The catalog shipped with the coordinator (models.json beside this file), or the one at `file`. */
export function loadCatalog(file?: string): Catalog {
  const url = file ?? new URL('./models.json', import.meta.url);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(url, 'utf8'));
  } catch (error) {
    throw new ApiError(
      'invalid_config',
      `catalogFile: cannot read ${String(url)}: ${(error as Error).message}`,
      {
        param: 'catalogFile',
      },
    );
  }
  const first = Value.Errors(CatalogSchema, parsed).First();
  if (first) {
    throw new ApiError('invalid_config', `catalogFile: ${first.path || '(root)'}: ${first.message}`, {
      param: 'catalogFile',
    });
  }
  return new Catalog((parsed as Static<typeof CatalogSchema>).models);
}
