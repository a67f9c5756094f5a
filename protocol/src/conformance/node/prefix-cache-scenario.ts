import { randomUUID } from 'node:crypto';
import { createFrame } from '../../create-frame.js';
import type { Usage } from '../../messages.js';
import { prefixKeys } from '../../prefix-keys.js';
import { check } from '../failure.js';
import { checkChatCompletion } from '../openai.js';
import { admitAndSettle } from './admit-node.js';
import { collectJob, modelOf, requireResult } from './collect-job.js';
import type { NodeScenario, NodeScenarioContext } from './context.js';

/** A conversation's start: a system prompt long enough to be worth caching, and a question. */
const OPENING = [
  {
    role: 'system',
    content: `You are the conformance kit's assistant. ${'Answer briefly and stay on topic. '.repeat(24)}`,
  },
  { role: 'user', content: 'Name a prime number.' },
];

/**
 * v0.5 (NODE_PROTOCOL.md §9 "Prefix cache"): two turns of one conversation. Every `cached_tokens`
 * reported is at most `prompt_tokens`. A node that advertises `prefixCache` (in a ping or presence
 * of the session) claims a cache: it must report `cached_tokens` on both turns, and advertise the
 * key of the conversation it just served under the job's model. A node that never advertises one
 * claims none and passes.
 */
export const PREFIX_CACHE_SCENARIO: NodeScenario = {
  name: 'prefix_cache',
  description:
    'v0.5: cached_tokens ≤ prompt_tokens; a node that advertises prefixCache reports cached_tokens and then advertises the key of the conversation it just served (a node that advertises none passes)',
  needs: ['handshake', 'manifest', 'chat'],
  run: async (context) => {
    const { socket, settings } = context;
    const { manifest } = await admitAndSettle(context);
    const model = modelOf(manifest, 'chat').id;
    const first = await chatTurn(context, model, OPENING);
    const messages = [
      ...OPENING,
      { role: 'assistant', content: first.content },
      { role: 'user', content: 'Another.' },
    ];
    const sentAt = Date.now();
    const second = await chatTurn(context, model, messages);
    if (socket.prefixCaches.length === 0) {
      // It claims no cache (it may still have reported cached_tokens, bounded above).
      return;
    }
    for (const [turn, usage] of [first.usage, second.usage].entries()) {
      check(
        typeof usage.prompt_tokens_details?.cached_tokens === 'number',
        `turn ${turn + 1}: a node advertising prefixCache reports usage.prompt_tokens_details.cached_tokens`,
      );
    }
    const key = prefixKeys(model, undefined, messages).at(-1)!;
    const advertised = await socket.prefixCacheSince(
      sentAt,
      (held) => held.some((entry) => entry.model === model && entry.keys.includes(key)),
      settings.stepTimeoutMs,
    );
    check(
      advertised !== undefined,
      `no ping or presence after the second turn advertised its key ${key} under ${model} (prefixKeys of its messages)`,
    );
  },
};

/** Sends one non-streamed chat job of `messages`; its content and usage, cached_tokens bounded. */
async function chatTurn(
  { socket, settings }: NodeScenarioContext,
  model: string,
  messages: Record<string, unknown>[],
): Promise<{ content: string; usage: Usage }> {
  const job = createFrame('job', {
    jobId: `job-${randomUUID()}`,
    kind: 'chat',
    model,
    request: { model, messages, max_tokens: 8, temperature: 0, stream: false },
    stream: false,
    timeoutMs: settings.jobTimeoutMs,
  });
  socket.send(job);
  const result = requireResult(await collectJob(socket, job.jobId, settings.jobTimeoutMs));
  const content = checkChatCompletion(result.response);
  const { usage } = result.response;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  check(
    cached === undefined || cached <= usage.prompt_tokens,
    `usage.prompt_tokens_details.cached_tokens ${cached} > prompt_tokens ${usage.prompt_tokens}`,
  );
  return { content, usage };
}
