import type { CatalogModel } from '../router/build-catalog.js';

/** A catalog entry in OpenRouter's model shape (with OpenAI's `object` and `owned_by` beside). */
export function openRouterModel(m: CatalogModel): Record<string, unknown> {
  const perToken = (price: CatalogModel['cheapest']['prompt']) =>
    m.unit === 'per_million_tokens' ? nanoPerMillionToUsd(BigInt(price.usdNano)) : '0';
  const input =
    m.family === 'vision' ? ['text', 'image'] : m.family === 'voice' ? ['audio', 'text'] : ['text'];
  const output =
    m.family === 'embedding' ? ['embeddings'] : m.family === 'voice' ? ['audio', 'text'] : ['text'];
  return {
    id: m.id,
    name: m.id,
    object: 'model',
    owned_by: 'gpumesh',
    created: 0,
    description: `${m.family} model served by ${m.liveNodes} gpumesh node${m.liveNodes === 1 ? '' : 's'}`,
    context_length: m.contextLength,
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: input,
      output_modalities: output,
      tokenizer: 'Other',
      instruct_type: null,
    },
    pricing: {
      prompt: perToken(m.cheapest.prompt),
      completion: perToken(m.cheapest.completion),
      request: '0',
      image: '0',
    },
    top_provider: { context_length: m.contextLength, max_completion_tokens: null, is_moderated: false },
    per_request_limits: null,
    live_nodes: m.liveNodes,
  };
}

/** Nanousd per million tokens as USD per token, a decimal string (1 nanousd/M = 1e-15 USD). */
function nanoPerMillionToUsd(nano: bigint): string {
  if (nano === 0n) return '0';
  const digits = nano.toString().padStart(16, '0');
  const whole = digits.slice(0, -15);
  const fraction = digits.slice(-15).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
