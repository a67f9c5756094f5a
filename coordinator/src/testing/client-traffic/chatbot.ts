/**
 * Chatbots: apps with a system prompt (a few well-known ones, many small ones made of a persona
 * and rules) holding conversations of growing histories, sent through the Python or Node SDK.
 */
import { answer } from './assistant-text.js';
import { chance, int, pick, type Random } from './draw.js';
import { followUp, question } from './user-text.js';

export type Body = Record<string, unknown>;
/** One user's requests, in the order they are sent. */
export type Session = (r: Random) => { kind: 'chat' | 'completion'; body: Body }[];

export const SYSTEM_PROMPTS = [
  'You are a helpful assistant.',
  'You are ChatBuddy, a friendly assistant for a consumer app. Keep answers short, warm and easy to read. Use markdown lists when helpful. Never mention that you are an AI model unless asked.',
  'You are an expert software engineer. Answer with working code first, then a brief explanation. Prefer modern idioms and include type hints where the language supports them.',
  'You are a customer support agent for Brightline Internet. Be polite and concise. If the customer asks about billing, tell them to visit the account page. Do not promise refunds.\n\nOffice hours: Mon–Fri 8am–6pm CET.\nEscalation email: support@brightline.example',
  'You are a travel planner. Suggest realistic itineraries with approximate costs in EUR. Ask one clarifying question if the request is ambiguous.',
  'Du bist ein hilfreicher Assistent. Antworte immer auf Deutsch.',
  "You are a writing assistant. Improve clarity and grammar while keeping the author's voice. Return only the revised text.",
  "You are a patient math tutor for high school students. Explain step by step and check the student's understanding with a short question at the end.",
];

/** The Python SDK's order: messages (or model, prompt), model, then the rest alphabetically. */
export function pythonSdk(kind: 'chat' | 'completion', fields: Body): Body {
  const { messages, prompt, model, ...rest } = fields;
  const head: Body = kind === 'chat' ? { messages, model } : { model, prompt };
  for (const key of Object.keys(rest).sort()) head[key] = rest[key];
  return head;
}

/** A chatbot with a system prompt: a conversation of 1–6 turns, each turn one request. */
export const chatbot =
  (system: string, params: (r: Random) => Body, sdk: 'python' | 'node'): Session =>
  (r) => {
    const turns = pick([1, 1, 1, 2, 2, 3, 4, 6], r);
    const history: Body[] = system ? [{ role: 'system', content: system }] : [];
    const out: { kind: 'chat'; body: Body }[] = [];
    for (let t = 0; t < turns; t++) {
      history.push({ role: 'user', content: t === 0 ? question(r) : followUp(r) });
      const fields = { model: 'm', messages: history.map((m) => ({ ...m })), ...params(r) };
      out.push({ kind: 'chat', body: sdk === 'python' ? pythonSdk('chat', fields) : fields });
      history.push({ role: 'assistant', content: answer(r) });
    }
    return out;
  };

const PERSONAS = [
  'You are a friendly assistant for a recipe website',
  'You are an internal helpdesk bot for an accounting firm',
  'You are a study buddy for university students',
  'You are a fitness coach who writes short, practical plans',
  'You are a senior data engineer helping with SQL and pipelines',
  'You are the assistant of an online bookstore',
  'You are a legal information assistant (not a lawyer)',
  'You are a language tutor for adult beginners',
  'You are a product copywriter for an outdoor gear brand',
  'You are a calm, supportive journaling companion',
  'You are a DevOps assistant for a Kubernetes platform team',
  'You are a trip planner for families with young children',
];
const RULES = [
  'Answer in at most three short paragraphs.',
  'Use bullet points for lists of steps.',
  'If you are unsure, say so instead of guessing.',
  'Never share personal data about other customers.',
  'Always end with one follow-up question.',
  'Prefer metric units.',
  'Do not give medical or financial advice; suggest a professional instead.',
  'Write in plain English and avoid jargon.',
  'When you show code, explain it line by line.',
  'Keep a warm and encouraging tone.',
  'Refuse politely if the request is off-topic.',
  'Mention the relevant help center article when there is one.',
];

/** Apps built by combining a persona and a few rules, fixed for the life of the module. */
const APP_PROMPTS = (() => {
  let seed = 0x2545f491;
  const r = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return PERSONAS.flatMap((persona) =>
    [0, 1].map(() => {
      const rules = Array.from({ length: int(1, 4, r) }, () => pick(RULES, r)).filter(
        (x, i, a) => a.indexOf(x) === i,
      );
      return `${persona}. ${rules.join(chance(0.5, r) ? ' ' : '\n- ')}`;
    }),
  );
})();

/** Many smaller apps, a few much busier than the rest. */
export const appSession: Session = (r) => {
  const index = Math.min(APP_PROMPTS.length - 1, Math.floor(APP_PROMPTS.length * r() ** 2));
  const streamed = index % 3 !== 0;
  const temperature = [0.2, 0.5, 0.7, 1][index % 4]!;
  return chatbot(
    APP_PROMPTS[index]!,
    () => ({
      stream: streamed,
      temperature,
      ...(index % 2 === 0 ? { max_tokens: 600 + 100 * (index % 5) } : {}),
    }),
    index % 2 === 0 ? 'python' : 'node',
  )(r);
};
