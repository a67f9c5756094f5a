/**
 * An OpenRouter-style client: the openai SDK and the AI SDK on a base URL ending in `/api/v1`.
 * Registered by clients.test.ts, on its network.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText } from 'ai';
import OpenAI from 'openai';
import { describe, expect, test } from 'vitest';
import type { ClientsNetwork } from '../support/clients-network.js';

export function openRouterTests(net: ClientsNetwork): void {
  describe('an OpenRouter-style client (base URL ending in /api/v1)', () => {
    test('default: the openai SDK with OpenRouter headers: models, chat with usage, a stream, responses', async () => {
      const openRouter = new OpenAI({
        baseURL: `${net.base}/api/v1`,
        apiKey: net.key,
        maxRetries: 0,
        defaultHeaders: { 'HTTP-Referer': 'https://example.com', 'X-Title': 'gpumesh clients test' },
      });
      expect((await openRouter.models.list()).data.map((m) => m.id)).toContain(net.model);
      const chat = await openRouter.chat.completions.create({
        model: net.model,
        messages: [{ role: 'user', content: 'Hi' }],
        max_tokens: 4,
        // OpenRouter's own members, as its docs send them through the openai SDK.
        ...({ usage: { include: true }, provider: { sort: 'price' } } as object),
      });
      expect(chat.usage!.completion_tokens).toBeGreaterThan(0);
      let usage: OpenAI.CompletionUsage | undefined;
      const stream = await openRouter.chat.completions.create({
        model: net.model,
        messages: [{ role: 'user', content: 'Hi' }],
        max_tokens: 4,
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of stream) usage ??= chunk.usage ?? undefined;
      expect(usage!.prompt_tokens).toBeGreaterThan(0);
      const response = await openRouter.responses.create({
        model: net.model,
        input: 'Hi',
        max_output_tokens: 4,
      });
      expect(response.object).toBe('response');
      const { text } = await generateText({
        model: createOpenAICompatible({ name: 'openrouter', baseURL: `${net.base}/api/v1`, apiKey: net.key })(
          net.model,
        ),
        prompt: 'Hi',
        maxOutputTokens: 4,
      });
      expect(typeof text).toBe('string');
    });
  });
}
