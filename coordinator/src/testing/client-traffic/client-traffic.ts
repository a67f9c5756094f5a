/**
 * Client traffic for tests, as nodes receive it: a mix of apps written independently of the canary
 * generator (its own sentences, words and code) — an OpenAI-SDK chatbot with a system prompt and
 * growing histories, streaming assistants, LangChain-style calls with stop sequences, RAG and
 * templated prompts, JSON extraction, a tool-using agent, legacy completion prompts, scripts and
 * one-off questions — interleaved as sessions of concurrent users would be. Each body goes
 * through the router's node-request rules (v1/job-for.ts): router fields removed,
 * max_tokens always set, a one-element prompt array as its string.
 */

import { ROUTER_FIELDS } from '../../v1/job-for.js';
import type { Body, Session } from './chatbot.js';
import { chance, type Random } from './draw.js';
import { SESSIONS } from './sessions.js';

/** A job of client traffic as a node receives it. */
export type ClientJob = { kind: 'chat' | 'completion'; stream: boolean; request: Record<string, unknown> };

/** The model's context and the router's cap: max_tokens for a client that names none. */
const DEFAULT_MAX_TOKENS = 4096;

function toNodeJob(kind: 'chat' | 'completion', body: Body): ClientJob {
  for (const key of Object.keys(body)) if (body[key] === null || body[key] === undefined) delete body[key];
  const request: Body = { ...body, model: 'm' };
  for (const f of ROUTER_FIELDS) delete request[f];
  request.max_tokens = (body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS) as number;
  if (Array.isArray(request.prompt)) request.prompt = request.prompt[0];
  return { kind, stream: body.stream === true, request };
}

/**
 * `count` client jobs of model `m` in arrival order: sessions start at random and their turns
 * interleave with other sessions' (about eight users at once).
 */
export function clientTraffic(count: number, r: Random): ClientJob[] {
  const total = SESSIONS.reduce((sum, s) => sum + s.weight, 0);
  const start = () => {
    let x = r() * total;
    for (const s of SESSIONS) {
      x -= s.weight;
      if (x < 0) return s.session(r);
    }
    return SESSIONS[0]!.session(r);
  };
  const active: ReturnType<Session>[] = [];
  const jobs: ClientJob[] = [];
  while (jobs.length < count) {
    if (active.length < 8 || chance(0.2, r)) active.push(start());
    const i = Math.floor(r() * active.length);
    const next = active[i]!.shift()!;
    if (active[i]!.length === 0) active.splice(i, 1);
    jobs.push(toNodeJob(next.kind, next.body));
  }
  return jobs;
}
