import type { Catalog } from '../catalog/catalog.js';
import type { CatalogModel } from '../router/build-catalog.js';
import type { Entry } from '../router/pick-index.js';

/** What a model's listing needs beside its catalog entry: its facts from the catalog and its nodes. */
export type ModelFacts = {
  /** Unix seconds: the weights' release date in the catalog, else when this coordinator first saw it. */
  created: number;
  /** The catalog's name for it, when the catalog knows it. */
  name: string | undefined;
  /** The request parameters at least one live node serving it honours, in a fixed order. */
  supportedParameters: readonly string[];
};

/** The modalities a model family takes in and gives out (OpenRouter's names). */
export function modalitiesOf(family: string): { input: string[]; output: string[] } {
  const input = family === 'vision' ? ['text', 'image'] : family === 'voice' ? ['audio', 'text'] : ['text'];
  const output = family === 'embedding' ? ['embeddings'] : family === 'voice' ? ['audio', 'text'] : ['text'];
  return { input, output };
}

/** A model family's `architecture` member in OpenRouter's shape (its model and endpoints listings). */
export function architectureOf(family: string): Record<string, unknown> {
  const { input, output } = modalitiesOf(family);
  return {
    modality: `${input.join('+')}->${output.join('+')}`,
    input_modalities: input,
    output_modalities: output,
    tokenizer: 'Other',
    instruct_type: null,
  };
}

/**
 * A catalog entry in OpenRouter's model shape (its SDK's `Model` schema: every member it requires),
 * with OpenAI's `object` and `owned_by` beside.
 */
export function openRouterModel(m: CatalogModel, facts: ModelFacts): Record<string, unknown> {
  const perToken = (price: CatalogModel['cheapest']['prompt']) =>
    m.unit === 'per_million_tokens' ? nanoPerMillionToUsd(BigInt(price.usdNano)) : '0';
  return {
    id: m.id,
    canonical_slug: m.id,
    hugging_face_id: null,
    name: facts.name ?? m.id,
    object: 'model',
    owned_by: 'gpumesh',
    created: facts.created,
    description: `${m.family} model served by ${m.liveNodes} gpumesh node${m.liveNodes === 1 ? '' : 's'}`,
    context_length: m.contextLength,
    architecture: architectureOf(m.family),
    pricing: {
      prompt: perToken(m.cheapest.prompt),
      completion: perToken(m.cheapest.completion),
      request: '0',
      image: '0',
    },
    top_provider: { context_length: m.contextLength, max_completion_tokens: null, is_moderated: false },
    per_request_limits: null,
    supported_parameters: facts.supportedParameters,
    // The nodes' own defaults apply (OpenAI's: temperature 1, top_p 1); none is imposed here.
    default_parameters: null,
    supported_voices: null,
    links: { details: `/api/v1/models/${m.id}/endpoints` },
    live_nodes: m.liveNodes,
  };
}

/** The parameters any of `entries` honours, in the order of their first appearance. */
export function unionOfParameters(entries: Iterable<Entry>): string[] {
  const out = new Set<string>();
  for (const e of entries) for (const p of e.offer.parameters ?? []) out.add(p);
  return [...out];
}

/** The catalog's release date of the weights `id` names (unix seconds), if it has one. */
export function catalogCreated(catalog: Catalog, id: string): number | undefined {
  const model = catalog.models.find((m) => m.id === id || m.embeddingId === id);
  return model?.created === undefined ? undefined : Math.floor(Date.parse(model.created) / 1000);
}

/** Nanousd per million tokens as USD per token, a decimal string (1 nanousd/M = 1e-15 USD). */
export function nanoPerMillionToUsd(nano: bigint): string {
  if (nano === 0n) return '0';
  const digits = nano.toString().padStart(16, '0');
  const whole = digits.slice(0, -15);
  const fraction = digits.slice(-15).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
