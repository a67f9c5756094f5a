/**
 * The edges of the API as OpenAI's answers them, over plain HTTP: over-context streams, streamed
 * and cut tool calls; and coordinator/README.md's /v1 parameter table against real requests.
 * Registered by clients.test.ts, on its network.
 */

import { describe, expect, test } from 'vitest';
import type { ClientsNetwork } from '../support/clients-network.js';
import { type Endpoint, readParameterTable } from '../support/parameter-table.js';

export function apiEdgeTests(net: ClientsNetwork): void {
  describe("tool calls and long prompts as OpenAI's API answers them", () => {
    const post = (url: string, body: Record<string, unknown>) =>
      fetch(`${net.base}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${net.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: net.model, ...body }),
      });
    /** A call whose arguments take many tokens: a string of at least 200 characters. */
    const note = {
      type: 'function',
      function: {
        name: 'write_note',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string', minLength: 200 } },
          required: ['text'],
        },
      },
    };
    const forced = {
      messages: [{ role: 'user', content: 'Write a note.' }],
      tools: [note],
      tool_choice: { type: 'function', function: { name: 'write_note' } },
    };

    test('behavior: a streamed over-context request is a 400 before any byte (chat and responses)', async () => {
      const long = 'word '.repeat(4_000);
      for (const [url, body] of [
        [
          '/v1/chat/completions',
          { messages: [{ role: 'user', content: long }], stream: true, max_tokens: 4 },
        ],
        ['/v1/responses', { input: long, stream: true, max_output_tokens: 4 }],
      ] as const) {
        const res = await post(url, body);
        expect(res.status, url).toBe(400);
        expect(res.headers.get('content-type'), url).toMatch(/^application\/json/);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
          'context_length_exceeded',
        );
      }
    });

    test("behavior: a streamed forced tool call's first argument delta arrives before the call ends", async () => {
      const shortNote = {
        type: 'function',
        function: {
          name: 'write_note',
          parameters: {
            type: 'object',
            properties: { text: { type: 'string', minLength: 40, maxLength: 80 } },
            required: ['text'],
          },
        },
      };
      const res = await post('/v1/chat/completions', {
        ...forced,
        tools: [shortNote],
        max_tokens: 300,
        stream: true,
      });
      expect(res.status).toBe(200);
      // Which network read each event came in: the first argument delta must come in an earlier read
      // than the end of the call (its finish chunk), i.e. it was sent while the call was generated.
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffered = '';
      let reads = 0;
      let firstArgumentsRead: number | undefined;
      let finishRead: number | undefined;
      let args = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        reads++;
        buffered += decoder.decode(value, { stream: true });
        const events = buffered.split('\n\n');
        buffered = events.pop()!;
        for (const event of events) {
          const data = event.replace(/^data: /, '');
          if (data === '[DONE]') continue;
          const choice = (
            JSON.parse(data) as {
              choices: {
                delta: { tool_calls?: { function: { arguments?: string } }[] };
                finish_reason: string | null;
              }[];
            }
          ).choices[0];
          const fragment = choice?.delta.tool_calls?.[0]?.function.arguments ?? '';
          if (fragment !== '') {
            firstArgumentsRead ??= reads;
            args += fragment;
          }
          if (choice?.finish_reason) finishRead = reads;
        }
      }
      expect(firstArgumentsRead).toBeDefined();
      expect(finishRead).toBeDefined();
      expect(firstArgumentsRead!).toBeLessThan(finishRead!);
      expect((JSON.parse(args) as { text: string }).text.length).toBeGreaterThanOrEqual(40);
    });

    test('behavior: max_tokens cutting a tool call is a 200 with finish_reason length and the partial call, billed', async () => {
      const res = await post('/v1/chat/completions', { ...forced, max_tokens: 70 });
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        id: string;
        choices: {
          finish_reason: string;
          message: { tool_calls: { function: { name: string; arguments: string } }[] };
        }[];
        usage: { completion_tokens: number; cost: number };
      };
      expect(body.choices[0]!.finish_reason).toBe('length');
      const [call] = body.choices[0]!.message.tool_calls;
      expect(call!.function.name).toBe('write_note');
      // Past the call's head (`{"name": "write_note", "arguments": `), short of 200 characters.
      expect(call!.function.arguments).toMatch(/^\{\s*"text"\s*:\s*"/);
      expect(() => JSON.parse(call!.function.arguments)).toThrow();
      expect(body.usage.completion_tokens).toBe(70);
      expect(body.usage.cost).toBeGreaterThan(0);
      await net.app.ctx.ledger.idle();
      const generation = (await (
        await fetch(`${net.base}/api/v1/generation?id=${body.id}`, {
          headers: { authorization: `Bearer ${net.key}` },
        })
      ).json()) as { data: { total_cost: number; native_tokens_completion: number; finish_reason: string } };
      expect(generation.data).toMatchObject({ native_tokens_completion: 70, finish_reason: 'length' });
      expect(generation.data.total_cost).toBe(body.usage.cost);

      // Streamed: the same partial call in deltas, then finish_reason length.
      const streamed = await (
        await post('/v1/chat/completions', { ...forced, max_tokens: 70, stream: true })
      ).text();
      const chunks = streamed
        .split('\n\n')
        .map((e) => e.replace(/^data: /, ''))
        .filter((d) => d !== '' && d !== '[DONE]')
        .map((d) => JSON.parse(d) as { choices: { finish_reason: string | null }[] });
      expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual([
        'length',
      ]);

      // Through the Responses API: incomplete (max_output_tokens), the partial function_call kept.
      const response = (await (
        await post('/v1/responses', {
          input: 'x',
          tools: [{ type: 'function', ...note.function }],
          tool_choice: { type: 'function', name: 'write_note' },
          max_output_tokens: 70,
        })
      ).json()) as { status: string; incomplete_details: unknown; output: { type: string; name?: string }[] };
      expect(response).toMatchObject({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
      });
      expect(response.output.find((o) => o.type === 'function_call')).toMatchObject({ name: 'write_note' });
    });
  });

  describe("coordinator/README.md's /v1 parameter table, against real requests", () => {
    test('behavior: every ignored cell answers 200 and every 400 cell names its field', async () => {
      const requests: Record<Endpoint, { url: string; body: () => Record<string, unknown> }> = {
        chat: {
          url: '/v1/chat/completions',
          body: () => ({ model: net.model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 }),
        },
        completions: {
          url: '/v1/completions',
          body: () => ({ model: net.model, prompt: 'Hi', max_tokens: 2 }),
        },
        embeddings: { url: '/v1/embeddings', body: () => ({ model: net.embedModel, input: 'Hi' }) },
        responses: {
          url: '/v1/responses',
          body: () => ({ model: net.model, input: 'Hi', max_output_tokens: 2 }),
        },
      };
      const checked: string[] = [];
      for (const row of readParameterTable()) {
        if (row.example === undefined) continue;
        for (const [endpoint, { url, body }] of Object.entries(requests) as [
          Endpoint,
          (typeof requests)[Endpoint],
        ][]) {
          const treatment = row.on[endpoint];
          if (treatment !== 'ignored' && treatment !== '400') continue;
          const res = await fetch(`${net.base}${url}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${net.key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ ...body(), [row.name]: row.example }),
          });
          const where = `${endpoint}: ${row.name} ${JSON.stringify(row.example)}`;
          const answer = (await res.json()) as { error?: { param: string | null; message: string } };
          if (treatment === 'ignored') expect(res.status, `${where}: ${JSON.stringify(answer)}`).toBe(200);
          else {
            expect(res.status, where).toBe(400);
            expect(
              answer.error!.param === row.name || answer.error!.message.includes(row.name),
              `${where}: ${JSON.stringify(answer.error)}`,
            ).toBe(true);
          }
          checked.push(where);
        }
      }
      expect(checked.length).toBeGreaterThan(40);
    }, 120_000);
  });
}
