import type { ChatHistoryItem } from 'node-llama-cpp';
import { type ChatMessage, type ChatRequest, messageText } from '../openai-shapes.js';
import { toolsPrompt } from './tool-signature.js';

/**
 * OpenAI messages as node-llama-cpp chat history, ending with the model's turn to answer — open,
 * and begun with `answerSoFar` when the job continues an answer (NODE_PROTOCOL.md §9 "Continuing an
 * answer": the chat wrappers leave the last model response without its end of turn, so generation
 * goes on from its text, as LlamaChat's "continue the last model response").
 *
 * The chat as the model's template renders it. Tool definitions go in a system turn first, one
 * signature line each (tool-signature.ts), with the answer form that calls them; an
 * assistant turn that called tools renders its calls as a JSON array of `{"name", "arguments"}`
 * (the arguments as the object they spell, as a model writes them: tool-calls.ts parses that form
 * back from an answer), and a tool's answer renders as a
 * user turn naming the call it answers — the template's own function-calling syntax is not used
 * (few GGUF templates define one), so any chat model can follow a tool loop.
 */
export function toChatHistory(
  messages: ChatMessage[],
  tools?: ChatRequest['tools'],
  answerSoFar?: string,
): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  if (tools && tools.length > 0) {
    const listed = tools.map((t) => ({
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters,
    }));
    history.push({ type: 'system', text: toolsPrompt(listed) });
  }
  for (const message of messages) {
    const text = messageText(message);
    if (message.role === 'system' || message.role === 'developer') history.push({ type: 'system', text });
    else if (message.role === 'user') history.push({ type: 'user', text });
    else if (message.role === 'tool')
      history.push({ type: 'user', text: `Result of tool call ${message.tool_call_id ?? ''}: ${text}` });
    else if (message.tool_calls && message.tool_calls.length > 0) {
      const calls = message.tool_calls.map((c) => ({
        name: c.function.name,
        arguments: parsedArguments(c.function.arguments),
      }));
      history.push({ type: 'model', response: [`${text}${JSON.stringify(calls)}`] });
    } else history.push({ type: 'model', response: [text] });
  }
  history.push({ type: 'model', response: answerSoFar ? [answerSoFar] : [] });
  return history;
}

/** A call's arguments as the JSON they spell, or the string itself when it is not JSON. */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
