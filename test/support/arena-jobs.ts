/**
 * The trust arena's jobs (test/trust-arena.test.ts): every sampling setting a client can ask for,
 * cycled with temperatures, kinds and streaming over seeded prompts, so every run checks the same.
 */
import type { Canary } from '../../coordinator/src/trust/canaries/make-canary.js';

/** A seeded PRNG (mulberry32): the arena's jobs are the same every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'time person year way day thing man world life hand part child eye woman place work week case point ' +
  'government company number group problem fact river garden music window letter story engine market ' +
  'bright quiet early simple strong young small large green happy careful heavy open modern ancient'
).split(' ');

/** Every sampling setting a client can ask for, cycled over the checks. */
const SETTINGS: Record<string, unknown>[] = [
  {},
  { top_p: 0.9 },
  { presence_penalty: 0.5, frequency_penalty: 0.5 },
  { stop: ['. ', '\n'] },
  {
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'x',
        schema: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] },
      },
    },
  },
  {
    tools: [
      {
        type: 'function',
        function: {
          name: 'lookup',
          parameters: { type: 'object', properties: { q: { type: 'boolean' } }, required: ['q'] },
        },
      },
    ],
    tool_choice: 'required',
  },
];
const TEMPERATURES = [0, 0.7, 1, 1.5];

/** The i-th arena job for `model`: its setting, temperature, kind and streaming cycle independently. */
export function arenaJob(model: string, i: number, random: () => number): Canary {
  const words = Array.from(
    { length: 4 + Math.floor(random() * 12) },
    () => WORDS[Math.floor(random() * WORDS.length)],
  );
  const text = `${words.join(' ')} ${i}`;
  const setting = SETTINGS[i % SETTINGS.length]!;
  const temperature = TEMPERATURES[Math.floor(i / SETTINGS.length) % TEMPERATURES.length]!;
  const chatOnly = 'tools' in setting || 'response_format' in setting;
  const kind = chatOnly || i % 3 !== 0 ? 'chat' : 'completion';
  const request: Record<string, unknown> = {
    model,
    // A grammar's output must be allowed to finish (a cut one is refused, issue 30).
    max_tokens: chatOnly ? 160 : 16 + Math.floor(random() * 16),
    seed: i,
    temperature,
    ...setting,
  };
  if (kind === 'chat') request.messages = [{ role: 'user', content: text }];
  else request.prompt = text;
  return { kind, stream: !chatOnly && i % 2 === 0, request };
}
