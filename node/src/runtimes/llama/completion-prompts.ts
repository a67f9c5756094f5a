/**
 * A completion's prompts as token ids, in OpenAI's four forms: a string, strings (one prompt
 * each), one prompt as token ids, or prompts as token ids. A string gets BOS (when the model wants
 * one) and the raw text; token ids are evaluated exactly as given, each checked to be in the model's
 * vocabulary (an id outside it must never reach llama.cpp).
 */
import type { LlamaModel, Token } from 'node-llama-cpp';
import { NodeError } from '../../errors.js';
import type { CompletionRequest } from '../openai-shapes.js';
import { vocabularySize } from './loaded-model.js';

export function completionPrompts(
  model: LlamaModel,
  prompt: CompletionRequest['prompt'],
  answerSoFar?: string,
): Token[][] {
  if (typeof prompt === 'string') return [textPrompt(model, prompt + (answerSoFar ?? ''))];
  if (prompt.every((p) => typeof p === 'string')) return prompt.map((p) => textPrompt(model, p));
  if (prompt.every((p) => typeof p === 'number')) return [idsPrompt(model, prompt, 'prompt')];
  return (prompt as number[][]).map((ids, i) => idsPrompt(model, ids, `prompt[${i}]`));
}

function textPrompt(model: LlamaModel, text: string): Token[] {
  const bos = model.tokens.bos;
  const tokens = model.tokenize(text);
  return bos !== null && model.tokens.shouldPrependBosToken ? [bos, ...tokens] : tokens;
}

function idsPrompt(model: LlamaModel, ids: readonly number[], where: string): Token[] {
  const size = vocabularySize(model);
  const bad = ids.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= size);
  if (bad >= 0) {
    throw new NodeError('invalid_request', {
      detail: `${where}[${bad}]: token id ${ids[bad]} is not in the model's vocabulary (ids 0…${size - 1}).`,
    });
  }
  return ids as Token[];
}
