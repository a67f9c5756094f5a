/**
 * The shape of a canary for a model with no recorded traffic: a mix like typical OpenAI-SDK
 * clients' as the node receives it (the router's node request). Mostly chat, streamed about two
 * times in three; the Python SDK's member order (messages, model, then alphabetical) or a
 * hand-written object's (model, messages, …); max_tokens, temperature and top_p named by some
 * clients only — the router then sets max_tokens, last; a system prompt in about half; one to five
 * turns; lengths drawn from wide log-normal spreads.
 */
import { DEFAULT_ROUTER_MAX_TOKENS_CAP } from '../../config.js';
import { pick } from './seeded-random.js';
import type { LineShape, MessageShape, Scalar, TextShape, TrafficShape } from './traffic-shape.js';

/** Turns of a conversation (a user message, and the assistant's answer before the next). */
const TURNS = [1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5];
const MAX_TOKENS = [150, 256, 256, 300, 500, 512, 800, 1000, 1024, 1024, 2000, 2048];
const TEMPERATURES = [0, 0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.7, 0.7, 0.8, 0.9, 1, 1];
const TOP_P = [0.8, 0.9, 0.95, 0.95, 1];

/** A shape of the default mix; `defaultMaxTokens` is what the router sets when a client names none. */
export function defaultShape(
  random: () => number,
  defaultMaxTokens = DEFAULT_ROUTER_MAX_TOKENS_CAP,
): TrafficShape {
  const chat = random() < 0.85;
  const stream = random() < (chat ? 0.65 : 0.3);
  const values: Record<string, Scalar> = {};
  if (random() < 0.45) values.max_tokens = pick(MAX_TOKENS, random);
  if (random() < 0.6) values.temperature = pick(TEMPERATURES, random);
  if (random() < 0.1) values.top_p = pick(TOP_P, random);
  if (random() < 0.05) values.seed = pick([0, 1, 7, 42, 123, 1234], random);
  if (random() < 0.05) values.frequency_penalty = pick([0.1, 0.2, 0.5], random);
  if (random() < 0.05) values.presence_penalty = pick([0.1, 0.3, 0.6], random);
  const named = Object.keys(values);
  const text = chat ? 'messages' : 'prompt';
  const python = random() < 0.6;
  const members = python ? [text, 'model', ...named.sort()] : ['model', text, ...named];
  if (values.max_tokens === undefined) {
    values.max_tokens = defaultMaxTokens;
    members.push('max_tokens');
  }
  if (!chat)
    return {
      kind: 'completion',
      stream,
      members,
      values,
      prompt: textOf(lengthOf(280, 1, random), '', random),
    };
  const messages: MessageShape[] = [];
  if (random() < 0.5)
    messages.push(messageOf('system', textOf(lengthOf(200, 0.9, random), '.', random), random));
  const turns = pick(TURNS, random);
  for (let t = 0; t < turns; t++) {
    if (t > 0) messages.push(messageOf('assistant', textOf(lengthOf(600, 0.8, random), '.', random), random));
    const end = random() < 0.55 ? '?' : random() < 0.8 ? '.' : '';
    messages.push(messageOf('user', textOf(lengthOf(t === 0 ? 120 : 60, 1.1, random), end, random), random));
  }
  return { kind: 'chat', stream, members, values, messages };
}

function messageOf(role: string, text: TextShape, random: () => number): MessageShape {
  return { role, members: ['role', 'content'], content: { form: 'string', text }, key: keyOf(random) };
}

/** A log-normal length around `median` characters, within 2 … 4,000. */
function lengthOf(median: number, spread: number, random: () => number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.round(Math.min(4_000, Math.max(2, median * Math.exp(spread * normal))));
}

/** Prose of `chars`: one line when short, else paragraphs (some of them list items) between blank lines. */
function textOf(chars: number, end: string, random: () => number): TextShape {
  if (chars < 240) return [lineOf('prose', chars, end, '', random)];
  const lines: LineShape[] = [];
  let left = chars;
  while (left > 0) {
    let length = Math.min(left, 80 + Math.floor(random() * 320));
    // Too little left for another paragraph: this one takes it.
    if (left - length < 40) length = left;
    left -= length;
    const list = random() < 0.25;
    lines.push(lineOf(list ? 'list' : 'prose', length, left === 0 ? end : '.', list ? '-' : '', random));
    if (left > 1) {
      lines.push(lineOf('blank', 0, '', '', random));
      left -= 2; // the blank line's newline and the next one's
    }
  }
  return lines;
}

function lineOf(
  kind: LineShape['kind'],
  chars: number,
  end: string,
  marker: string,
  random: () => number,
): LineShape {
  // Character counts as ordinary prose has them (a capital or two a sentence, a comma in three).
  const sentences = Math.max(1, Math.round(chars / 70));
  const counts = {
    digits: random() < 0.2 ? 1 + Math.floor(random() * 4) : 0,
    upper: kind === 'blank' ? 0 : sentences + Math.floor(random() * (sentences + 1)),
    wide: 0,
    commas: kind === 'blank' ? 0 : Math.floor((sentences * random() * 4) / 3),
    stops: kind === 'blank' ? 0 : sentences,
    marks: kind === 'blank' ? 0 : Math.floor(random() * (sentences + 1)),
    words: kind === 'blank' ? 0 : Math.max(1, Math.round(chars / (5 + random()))),
    // About half the words are function words, a third short, a fifth long (English prose).
    functionWords: kind === 'blank' ? 0 : Math.round(chars / (11 + 2 * random())),
    shortWords: kind === 'blank' ? 0 : Math.round(chars / (14 + 4 * random())),
    longWords: kind === 'blank' ? 0 : Math.round(chars / (25 + 10 * random())),
    bold: 0,
    ticks: 0,
  };
  const start = kind === 'blank' ? '' : random() < 0.15 ? 'a' : 'A';
  return { kind, chars, indent: '', marker, end, start, counts, lines: 1, key: keyOf(random) };
}

/** A key no recorded text has: default-mix texts never recur. */
function keyOf(random: () => number): number {
  return Math.floor(random() * 2 ** 53);
}
