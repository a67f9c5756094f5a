import type { Manifest } from '@gpumesh/protocol';

/** The runtime of gpumesh-node that serves a local GGUF file (node/src/runtimes/llama/). */
const LLAMA_RUNTIME = 'node-llama-cpp';

/**
 * Sampling parameters every chat or text runtime of gpumesh-node honours: the llama runtime
 * implements them, the OpenAI-compatible relay passes them to its server.
 */
const SAMPLING = [
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'response_format',
] as const;

/**
 * What the llama runtime adds (node/src/runtimes/openai-shapes.ts ChatRequest): truncation,
 * biases, log-probabilities, grammar-constrained JSON schemas and tool calls.
 */
const LLAMA_TEXT = [
  'top_k',
  'min_p',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'structured_outputs',
] as const;
const LLAMA_TOOLS = ['tools', 'tool_choice', 'parallel_tool_calls'] as const;

/**
 * The request parameters (OpenRouter's names) a node honours for one of its models — what
 * `/api/v1/models` lists as `supported_parameters`: a node refuses any option it cannot honour
 * (NODE_PROTOCOL.md §9), so this is what a request may set and get acted on. A local file (a
 * hashed offer on a node running node-llama-cpp) gets the llama runtime's full set; an offer
 * relayed to an OpenAI-compatible server the sampling parameters the relay passes on. Embedding
 * and voice models take none of them.
 */
export function supportedParameters(manifest: Manifest, model: Manifest['models'][number]): string[] {
  if (model.family !== 'chat' && model.family !== 'text' && model.family !== 'vision') return [];
  const llama = model.sha256 !== undefined && manifest.runtimes.some((r) => r.name === LLAMA_RUNTIME);
  if (!llama) return [...SAMPLING];
  return [...SAMPLING, ...LLAMA_TEXT, ...(model.family === 'text' ? [] : LLAMA_TOOLS)];
}
