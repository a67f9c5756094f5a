import type { TriggerInference } from './coordinator/context.js';

/**
 * A trigger that sends the kit's requests to an OpenAI-compatible API, as any client would:
 * POST {apiUrl}/chat/completions or {apiUrl}/embeddings with `Authorization: Bearer {apiKey}`.
 */
export function openAiTrigger(apiUrl: string, apiKey: string): TriggerInference {
  const base = apiUrl.replace(/\/+$/, '');
  return async ({ kind, body }) => {
    const path = kind === 'embedding' ? '/embeddings' : '/chat/completions';
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`HTTP ${response.status} from ${path}: ${text.slice(0, 300)}`);
    return text;
  };
}
