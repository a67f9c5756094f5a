/** The traffic mix: kinds of client sessions, each with its weight. */
import { appSession, chatbot, pythonSdk, type Session, SYSTEM_PROMPTS } from './chatbot.js';
import { COMPLETION_SESSIONS } from './completion-sessions.js';
import { chance, int, pick } from './draw.js';
import { SLOTS } from './slots.js';
import { article, question } from './user-text.js';

export const SESSIONS: { weight: number; session: Session }[] = [
  { weight: 14, session: appSession },
  // A consumer chatbot (OpenAI Python SDK, streamed).
  {
    weight: 14,
    session: chatbot(SYSTEM_PROMPTS[1]!, () => ({ stream: true, temperature: 0.7 }), 'python'),
  },
  // The default "helpful assistant" of many scripts and demos, Node SDK.
  {
    weight: 8,
    session: chatbot(
      SYSTEM_PROMPTS[0]!,
      (r) => ({
        stream: chance(0.5, r),
        ...(chance(0.5, r) ? { max_tokens: pick([256, 512, 1024], r) } : {}),
      }),
      'node',
    ),
  },
  // A coding assistant (streamed, low temperature, long outputs).
  {
    weight: 9,
    session: chatbot(
      SYSTEM_PROMPTS[2]!,
      () => ({ stream: true, temperature: 0.2, max_tokens: 2048 }),
      'python',
    ),
  },
  // Support bot with a multi-line system prompt.
  {
    weight: 5,
    session: chatbot(SYSTEM_PROMPTS[3]!, () => ({ temperature: 0.3, max_tokens: 400, stream: true }), 'node'),
  },
  { weight: 3, session: chatbot(SYSTEM_PROMPTS[4]!, () => ({ temperature: 0.8 }), 'python') },
  { weight: 2, session: chatbot(SYSTEM_PROMPTS[5]!, () => ({ stream: true }), 'node') },
  { weight: 3, session: chatbot(SYSTEM_PROMPTS[7]!, () => ({ temperature: 0.4, top_p: 0.95 }), 'python') },
  // No system prompt: curl and quick scripts.
  {
    weight: 12,
    session: chatbot(
      '',
      (r) => ({
        ...(chance(0.6, r) ? { temperature: pick([0, 0.5, 0.7, 1, 1.2], r) } : {}),
        ...(chance(0.5, r) ? { max_tokens: pick([100, 200, 500, 1000, 1500], r) } : {}),
        ...(chance(0.1, r) ? { seed: pick([42, 1234, 7], r) } : {}),
        ...(chance(0.4, r) ? { stream: true } : {}),
      }),
      'node',
    ),
  },
  // LangChain-style chat: n=1, stop sequences, temperature 0.7, the SDK's order.
  {
    weight: 6,
    session: (r) => {
      const q = question(r);
      const body = pythonSdk('chat', {
        model: 'm',
        messages: [
          { role: 'system', content: SYSTEM_PROMPTS[0]! },
          {
            role: 'user',
            content: `Answer the following question as best you can.\n\nQuestion: ${q}\nThought:`,
          },
        ],
        n: 1,
        stream: false,
        temperature: 0.7,
        stop: ['\nObservation:', '\n\tObservation:'],
      });
      return [{ kind: 'chat', body }];
    },
  },
  // RAG: context paragraphs and a question in one templated user message.
  {
    weight: 7,
    session: (r) => {
      const context = [article(r, int(2, 5, r)), article(r, int(2, 4, r))].join('\n\n---\n\n');
      const body = {
        model: 'm',
        messages: [
          {
            role: 'system',
            content:
              'Answer using only the context. If the answer is not in the context, say "I don\'t know".',
          },
          { role: 'user', content: `Context:\n${context}\n\nQuestion: ${question(r)}` },
        ],
        temperature: 0,
        max_tokens: 512,
      };
      return [{ kind: 'chat', body }];
    },
  },
  // Summarize / translate templates.
  {
    weight: 5,
    session: (r) => {
      const text = article(r, int(2, 8, r));
      const ask = chance(0.5, r)
        ? `Summarize the following text in ${pick(['one sentence', '3 bullet points', '50 words'], r)}:\n\n${text}`
        : `Translate the following text to ${pick(SLOTS.language!, r)}:\n\n${text}`;
      return [
        {
          kind: 'chat',
          body: pythonSdk('chat', {
            model: 'm',
            messages: [{ role: 'user', content: ask }],
            temperature: 0.3,
          }),
        },
      ];
    },
  },
  // JSON extraction with response_format.
  {
    weight: 4,
    session: (r) => {
      const body = pythonSdk('chat', {
        model: 'm',
        messages: [
          {
            role: 'system',
            content:
              'Extract the customer name, order number and issue from the email. Respond with a JSON object with keys "name", "order", "issue".',
          },
          {
            role: 'user',
            content: `Hello,\n\n${article(r, int(1, 3, r))}\n\nOrder #${int(10000, 99999, r)}\n\nBest,\n${pick(SLOTS.name!, r)}`,
          },
        ],
        response_format: { type: 'json_object' },
        temperature: 0,
      });
      return [{ kind: 'chat', body }];
    },
  },
  // A tool-using agent: the tools, a call in the history, its result.
  {
    weight: 4,
    session: (r) => {
      const tools = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the current weather for a city.',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
              required: ['city'],
            },
          },
        },
        {
          type: 'function',
          function: {
            name: 'search_web',
            description: 'Search the web and return the top results.',
            parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
          },
        },
      ];
      const city = pick(SLOTS.city!, r);
      const user = { role: 'user', content: `What's the weather like in ${city} right now?` };
      const id = `call_${Math.floor(r() * 1e16).toString(36)}${Math.floor(r() * 1e16).toString(36)}`.slice(
        0,
        29,
      );
      const first = pythonSdk('chat', {
        model: 'm',
        messages: [user],
        tools,
        tool_choice: 'auto',
        temperature: 0,
      });
      const second = pythonSdk('chat', {
        model: 'm',
        messages: [
          user,
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id,
                type: 'function',
                function: { name: 'get_weather', arguments: JSON.stringify({ city }) },
              },
            ],
          },
          {
            role: 'tool',
            tool_call_id: id,
            content: JSON.stringify({
              city,
              temp_c: int(-5, 35, r),
              conditions: pick(['sunny', 'light rain', 'cloudy'], r),
            }),
          },
        ],
        tools,
        tool_choice: 'auto',
        temperature: 0,
      });
      return [
        { kind: 'chat', body: first },
        { kind: 'chat', body: second },
      ];
    },
  },
  ...COMPLETION_SESSIONS,
];
