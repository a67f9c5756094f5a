import { describe, expect, test } from 'vitest';
import { finishChunk, responseAsChunk, usageChunk, withoutFinish } from './chunks.js';

const chat = { requestId: 'req-1', model: 'm', kind: 'chat' } as const;
const completion = { ...chat, kind: 'completion' } as const;

describe('withoutFinish', () => {
  test('default: a chunk without a finish reason passes as it is', () => {
    const chunk = { choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] };
    expect(withoutFinish(chunk)).toBe(chunk);
  });

  test('behavior: a finish reason is cleared and the usage dropped; the content stays', () => {
    const chunk = {
      id: 'node-id',
      usage: { prompt_tokens: 1 },
      choices: [{ index: 0, delta: { content: 'end' }, finish_reason: 'stop' }],
    };
    expect(withoutFinish(chunk)).toEqual({
      id: 'node-id',
      choices: [{ index: 0, delta: { content: 'end' }, finish_reason: null }],
    });
  });

  test('behavior: a finish that carries nothing else is not relayed', () => {
    expect(withoutFinish({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })).toBeUndefined();
    expect(withoutFinish({ choices: [{ index: 0, text: '', finish_reason: 'length' }] })).toBeUndefined();
  });
});

describe('responseAsChunk', () => {
  test('default: a chat response is one chunk with the whole message as its delta', () => {
    const response = { created: 7, choices: [{ message: { role: 'assistant', content: 'all of it' } }] };
    expect(responseAsChunk(chat, response)).toEqual({
      id: 'req-1',
      object: 'chat.completion.chunk',
      created: 7,
      model: 'm',
      choices: [
        { index: 0, delta: { role: 'assistant', content: 'all of it' }, logprobs: null, finish_reason: null },
      ],
    });
  });

  test('behavior: a completion response is one text_completion chunk', () => {
    expect(responseAsChunk(completion, { created: 7, choices: [{ text: 'abc' }] })).toEqual({
      id: 'req-1',
      object: 'text_completion',
      created: 7,
      model: 'm',
      choices: [{ index: 0, text: 'abc', logprobs: null, finish_reason: null }],
    });
  });

  test('behavior: every choice goes, each with its index; a choice that called tools streams its calls', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const response = {
      created: 7,
      choices: [
        { index: 0, message: { role: 'assistant', content: 'text' } },
        { index: 1, message: { role: 'assistant', content: null, tool_calls: [call] } },
      ],
    };
    expect(responseAsChunk(chat, response).choices).toEqual([
      { index: 0, delta: { role: 'assistant', content: 'text' }, logprobs: null, finish_reason: null },
      {
        index: 1,
        delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, ...call }] },
        logprobs: null,
        finish_reason: null,
      },
    ]);
    const texts = responseAsChunk(completion, { choices: [{ text: 'a' }, { text: 'b' }] }).choices;
    expect((texts as { index: number; text: string }[]).map((c) => [c.index, c.text])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ]);
  });
});

describe('finishChunk', () => {
  test('default: each choice’s finish reason, once, with an empty delta', () => {
    const response = { created: 7, choices: [{ index: 0, finish_reason: 'length' }, { index: 1 }] };
    expect(finishChunk(chat, response)).toEqual({
      id: 'req-1',
      object: 'chat.completion.chunk',
      created: 7,
      model: 'm',
      choices: [
        { index: 0, delta: {}, finish_reason: 'length' },
        { index: 1, delta: {}, finish_reason: 'stop' },
      ],
    });
  });

  test('behavior: a completion’s finish chunk has empty text; a response without choices ends with stop', () => {
    expect(finishChunk(completion, { created: 7 }).choices).toEqual([
      { index: 0, text: '', finish_reason: 'stop' },
    ]);
  });
});

describe('usageChunk', () => {
  test('default: no choices, the usage with its cost', () => {
    const usage = { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, cost: 0.001 };
    expect(usageChunk(chat, { created: 7 }, usage)).toEqual({
      id: 'req-1',
      object: 'chat.completion.chunk',
      created: 7,
      model: 'm',
      choices: [],
      usage,
    });
  });
});
