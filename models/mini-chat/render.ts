/**
 * Renders the generated conversations exactly as the node daemon will show them to the model, and
 * tokenizes them with llama.cpp's own tokenizer, so the training tokens are the serving tokens.
 *
 *   render.ts text   --data .train/train.jsonl --out .train/render.txt
 *       the rendered text (for learning the vocabulary)
 *   render.ts tokens --data .train/train.jsonl --vocab .train/vocab.json --out .train/train
 *       <out>.tokens (uint16 ids) and <out>.mask (1 on the answer and its end of turn, which the
 *       loss is taken on), conversations one after another, each starting with its BOS
 *
 * The prompt is the daemon's: toChatHistory (node/src/runtimes/llama/chat-history.ts) under the
 * chat wrapper node-llama-cpp resolves for the model's template; the answer follows as the model
 * would sample it: its text's tokens, then <|im_end|>. A tool-calling answer is the calls as a
 * JSON array of {"name", "arguments"}, the form the daemon renders and parses back.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ChatMLChatWrapper, getLlama, type LlamaModel, resolveChatWrapper } from 'node-llama-cpp';
import { toChatHistory } from '../../node/src/runtimes/llama/chat-history.js';
import type { ChatMessage, ChatRequest } from '../../node/src/runtimes/openai-shapes.js';
import { chatModelGguf, emptyWeights, type Vocabulary } from './chat-model-gguf.js';

type Conversation = {
  messages: ChatMessage[];
  tools?: ChatRequest['tools'];
  target: { content?: string; tool_calls?: { name: string; arguments: unknown }[] };
};

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    data: { type: 'string' },
    vocab: { type: 'string' },
    out: { type: 'string' },
  },
});

/** The answer's text: its content, or its tool calls as the daemon renders them. */
export function answerText(target: Conversation['target']): string {
  return target.tool_calls ? JSON.stringify(target.tool_calls) : (target.content ?? '');
}

const conversations = readFileSync(values.data!, 'utf8')
  .split('\n')
  .filter((line) => line.length > 0)
  .map((line) => JSON.parse(line) as Conversation);

if (positionals[0] === 'text') {
  const wrapper = new ChatMLChatWrapper();
  const parts: string[] = [];
  for (const c of conversations) {
    const state = wrapper.generateContextState({ chatHistory: toChatHistory(c.messages, c.tools) });
    parts.push(state.contextText.toString(), answerText(c.target), '<|im_end|>\n');
  }
  writeFileSync(values.out!, parts.join(''));
  console.log(`rendered ${conversations.length} conversations to ${values.out}`);
} else if (positionals[0] === 'tokens') {
  const vocabulary = JSON.parse(readFileSync(values.vocab!, 'utf8')) as Vocabulary;
  const shape = {
    layers: 1,
    width: 32,
    heads: 1,
    kvHeads: 1,
    feedForward: 32,
    contextLength: 8192,
    ropeFreqBase: 10000,
  };
  const vocabPath = `${values.out}.vocab.gguf`;
  writeFileSync(
    vocabPath,
    chatModelGguf({
      name: 'gpumesh mini-chat (tokenizer only)',
      shape,
      vocabulary,
      weights: emptyWeights(shape, vocabulary.tokens.length),
      type: 'f32',
    }),
  );
  const llama = await getLlama({ gpu: false });
  const model: LlamaModel = await llama.loadModel({ modelPath: vocabPath, vocabOnly: true });
  const wrapper = resolveChatWrapper(model);
  if (!(wrapper instanceof ChatMLChatWrapper)) {
    throw new Error(`expected the ChatML wrapper for the model's template, got ${wrapper.wrapperName}`);
  }
  const endOfTurn = model.tokens.eos!;
  const tokens: number[] = [];
  const mask: number[] = [];
  let longest = 0;
  for (const c of conversations) {
    const state = wrapper.generateContextState({ chatHistory: toChatHistory(c.messages, c.tools) });
    const prompt = state.contextText.tokenize(model.tokenizer);
    const answer = [...model.tokenize(answerText(c.target)), endOfTurn];
    longest = Math.max(longest, prompt.length + answer.length);
    for (const t of prompt) {
      tokens.push(t);
      mask.push(0);
    }
    for (const t of answer) {
      tokens.push(t);
      mask.push(1);
    }
  }
  writeFileSync(`${values.out}.tokens`, Buffer.from(Uint16Array.from(tokens).buffer));
  writeFileSync(`${values.out}.mask`, Uint8Array.from(mask));
  const answered = mask.reduce((a, b) => a + b, 0);
  console.log(
    `${conversations.length} conversations: ${tokens.length} tokens (${answered} in answers), longest ${longest}, ` +
      `${(tokens.length / conversations.length).toFixed(1)} a conversation`,
  );
  await model.dispose();
  await llama.dispose();
} else {
  throw new Error('usage: render.ts text|tokens --data FILE [--vocab FILE] --out PATH');
}
