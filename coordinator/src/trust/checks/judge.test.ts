import { CHECK_CAP } from '@gpumesh/protocol/internal';
import { describe, expect, test } from 'vitest';
import { type Claims, checkableRequest, judge, precheck } from './judge.js';

const claims = (over: Partial<Claims> = {}): Claims => ({
  kind: 'chat',
  request: { messages: [{ role: 'user', content: 'Say hello' }] },
  usage: { prompt_tokens: 3, completion_tokens: 2 },
  tokenIds: { prompt: [1, 2, 3], completion: [7, 8] },
  delivered: 'hello there',
  ...over,
});

/** A verifier's v0.2 answer for two tokens sampled as the model would. */
const answer = (over: Record<string, unknown> = {}) => ({
  object: 'verification',
  logprobs: [-0.5, -1],
  in_top_k: '11',
  sampled_logprobs: [-0.5, -1],
  entropy: [0.7, 0.9],
  entropy_var: [0.3, 0.4],
  top_k_mass: [1, 1],
  edge_gaps: [0, 0],
  prompt_text: '<s>### User: Say hello\n### Assistant:',
  completion_text: 'hello there',
  usage: { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 },
  ...over,
});

describe('precheck', () => {
  test('error: no ids, or ids that disagree with usage, fail outright', () => {
    expect(precheck(claims({ tokenIds: undefined }))).toBe('no token ids');
    expect(precheck(claims({ usage: { prompt_tokens: 3, completion_tokens: 5 } }))).toMatch(
      /completion token ids/,
    );
    expect(precheck(claims({ usage: { prompt_tokens: 9, completion_tokens: 2 } }))).toMatch(
      /prompt token ids/,
    );
    expect(precheck(claims())).toBeUndefined();
  });

  test('behavior: with n > 1 the usage counts every choice; choice 0 ids may not exceed it', () => {
    const request = { model: 'm', messages: [{ role: 'user', content: 'Say hello' }], n: 3 };
    expect(precheck(claims({ request, usage: { prompt_tokens: 3, completion_tokens: 6 } }))).toBeUndefined();
    expect(precheck(claims({ request, usage: { prompt_tokens: 3, completion_tokens: 1 } }))).toMatch(
      /completion token ids/,
    );
  });
});

describe('judge', () => {
  test('behavior: honest tokens give no evidence; the texts agree', () => {
    const j = judge(answer(), claims())!;
    expect(j.failure).toBeUndefined();
    expect(j.passed).toBe(true);
    expect(j.logE).toBeLessThan(0);
  });

  test('behavior: a stop string may end the delivered text before the ids; a lost byte character is allowed', () => {
    expect(
      judge(
        answer({ completion_text: 'hello there. Next' }),
        claims({ request: { messages: [{ role: 'user', content: 'Say hello' }], stop: '.' } }),
      )!.failure,
    ).toBeUndefined();
    expect(judge(answer({ completion_text: 'hello thère' }), claims())!.failure).toBeUndefined();
  });

  test('error: ids of another text, or a prompt that does not hold the request, fail outright at the cap', () => {
    const other = judge(answer({ completion_text: 'completely different words' }), claims())!;
    expect(other).toMatchObject({
      passed: false,
      logE: CHECK_CAP,
      failure: expect.stringMatching(/delivered text/),
    });
    const replay = judge(answer({ prompt_text: '<s>### User: What is 2+2?' }), claims())!;
    expect(replay.failure).toMatch(/prompt token ids/);
  });

  test('behavior: tokens the sampler could not have kept are evidence; near the edge they are not', () => {
    expect(
      judge(answer({ sampled_logprobs: [null, null], edge_gaps: [3, 4] }), claims())!.logE,
    ).toBeGreaterThan(3);
    expect(judge(answer({ sampled_logprobs: [null, -1], edge_gaps: [0.2, 0] }), claims())!.passed).toBe(true);
  });

  test("behavior: a continued answer's evidence counts only the continuing node's tokens (scoredFrom)", () => {
    // The first token, another node's, is one its sampler could not have kept; the second is honest.
    const bad = answer({ sampled_logprobs: [null, -1], edge_gaps: [5, 0] });
    expect(judge(bad, claims())!.logE).toBeGreaterThan(1);
    const continued = judge(bad, claims({ scoredFrom: 1 }))!;
    expect(continued.tokens).toBe(1);
    expect(continued.passed).toBe(true);
    // The text check still covers the whole answer.
    expect(judge(answer(), claims({ scoredFrom: 1, delivered: 'hello world' }))!.failure).toBeDefined();
  });

  test('behavior: a grammar-shaped answer is not scored', () => {
    const j = judge(
      answer({ sampled_logprobs: [null, null], edge_gaps: [9, 9] }),
      claims({
        request: {
          messages: [{ role: 'user', content: 'Say hello' }],
          response_format: { type: 'json_object' },
        },
      }),
    )!;
    expect(j).toMatchObject({ scored: false, logE: 0, passed: false });
  });

  test('behavior: a strict tool in tool_choice auto shapes the answer (not scored); one not strict does not', () => {
    const withTool = (strict: boolean, choice?: string) =>
      claims({
        request: {
          messages: [{ role: 'user', content: 'Say hello' }],
          tools: [{ type: 'function', function: { name: 'f', strict, parameters: { type: 'object' } } }],
          ...(choice ? { tool_choice: choice } : {}),
        },
      });
    expect(judge(answer(), withTool(true))!.scored).toBe(false);
    expect(judge(answer(), withTool(true, 'auto'))!.scored).toBe(false);
    expect(judge(answer(), withTool(false))!.scored).toBe(true);
    expect(judge(answer(), withTool(true, 'none'))!.scored).toBe(true);
    expect(judge(answer(), withTool(false, 'required'))!.scored).toBe(false);
  });

  test('error: an answer out of protocol decides nothing', () => {
    expect(judge(answer({ entropy: [0.7] }), claims())).toBeUndefined();
    expect(judge(answer({ sampled_logprobs: [0.5, -1] }), claims())).toBeUndefined();
    expect(judge(answer({ edge_gaps: [-1, 0] }), claims())).toBeUndefined();
  });
});

describe('checkableRequest', () => {
  test('behavior: chat and one string prompt are checked; several prompts or token ids are not', () => {
    expect(checkableRequest('chat', { messages: [] })).toBe(true);
    expect(checkableRequest('completion', { prompt: 'Once' })).toBe(true);
    expect(checkableRequest('completion', { prompt: ['a', 'b'] })).toBe(false);
    expect(checkableRequest('completion', { prompt: [1, 2, 3] })).toBe(false);
    expect(checkableRequest('completion', { prompt: [[1], [2]] })).toBe(false);
    expect(checkableRequest('embedding', { input: 'x' })).toBe(false);
  });
});
