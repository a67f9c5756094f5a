/**
 * A node's-eye view of jobs for tests (issue 29): features of the job frame alone — kind, stream,
 * the request's members, order and values, message structure and lengths, character and word
 * statistics (text-stats.ts), the old canaries' tells (public prompt pool, " (N)"), and repetition
 * across the jobs seen before (system prompts, messages, histories, templates).
 */
import { type Job, OLD_CANARY_PROMPTS } from './old-canary.js';
import { textStats } from './text-stats.js';

export type Features = { num: Record<string, number>; cat: Record<string, string> };
/** A trained model: a job's features → its score (higher: more likely a canary). */
export type Model = (f: Features) => number;

/** Online features: each call sees the jobs given before (repetition), then remembers this one. */
export class JobFeatureExtractor {
  readonly #seenTexts = new Map<string, number>();
  readonly #seenConversations = new Set<string>();
  readonly #seenPrefixes = new Set<string>();

  features(job: Job): Features {
    const num: Record<string, number> = {};
    const cat: Record<string, string> = {};
    const r = job.request;
    const members = Object.keys(r);
    cat.kind = job.kind;
    cat.stream = String(job.stream);
    cat.members = members.join(',');
    cat.memberSet = [...members].sort().join(',');
    for (const p of [
      'max_tokens',
      'temperature',
      'top_p',
      'seed',
      'n',
      'presence_penalty',
      'frequency_penalty',
      'logprobs',
    ]) {
      num[`has_${p}`] = p in r ? 1 : 0;
      cat[`value_${p}`] = p in r ? JSON.stringify(r[p]) : '-';
    }
    num.logMaxTokens = Math.log1p(Number(r.max_tokens ?? 0));
    const stops =
      r.stop === undefined ? [] : Array.isArray(r.stop) ? (r.stop as string[]) : [r.stop as string];
    num.stops = stops.length;
    num.stopChars = stops.reduce((s, x) => s + String(x).length, 0);
    cat.tools = Array.isArray(r.tools) ? String(r.tools.length) : '-';
    cat.toolChoice =
      r.tool_choice === undefined ? '-' : typeof r.tool_choice === 'string' ? r.tool_choice : 'object';
    cat.responseFormat = (r.response_format as { type?: string } | undefined)?.type ?? '-';

    const messages = Array.isArray(r.messages) ? (r.messages as Record<string, unknown>[]) : [];
    const textOf = (m: Record<string, unknown>): string =>
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? (m.content as { text?: string }[]).map((p) => p.text ?? '').join('\n')
          : '';
    const texts = messages.map(textOf);
    const prompt = typeof r.prompt === 'string' ? r.prompt : '';
    const users = messages.filter((m) => m.role === 'user');
    const lastText =
      job.kind === 'completion' ? prompt : users.length > 0 ? textOf(users[users.length - 1]!) : '';
    const system = messages.find((m) => m.role === 'system' || m.role === 'developer');
    num.messages = messages.length;
    num.userMessages = users.length;
    num.assistantMessages = messages.filter((m) => m.role === 'assistant').length;
    cat.roles = messages.map((m) => String(m.role).charAt(0)).join('');
    cat.hasSystem = String(Boolean(system));
    cat.messageMembers = [...new Set(messages.map((m) => Object.keys(m).join('+')))].sort().join('|');
    num.logSystemChars = Math.log1p(system ? textOf(system).length : 0);
    num.logLastChars = Math.log1p(lastText.length);
    num.logFirstChars = Math.log1p((texts[0] ?? prompt).length);
    const all = job.kind === 'completion' ? prompt : texts.join('\n');
    Object.assign(num, textStats(all, ''));
    Object.assign(num, textStats(lastText, 'last_'));
    cat.lastEnd =
      lastText.trimEnd().slice(-1).replace(/[a-z]/, 'a').replace(/[A-Z]/, 'A').replace(/[0-9]/, '0') || '-';
    cat.lastStart = lastText.charAt(0).replace(/[a-z]/, 'a').replace(/[A-Z]/, 'A') || '-';

    // The old canaries' tells.
    num.trailingNumber = /\s\(\d+\)$/.test(lastText) ? 1 : 0;
    num.oldPool = OLD_CANARY_PROMPTS.includes(lastText.replace(/\s\(\d+\)$/, '')) ? 1 : 0;

    // Repetition across the jobs seen before.
    const seen = (t: string) => this.#seenTexts.get(t) ?? 0;
    num.systemSeen = system ? Math.log1p(seen(textOf(system))) : -1;
    num.lastSeen = Math.log1p(seen(lastText));
    const textsAll = job.kind === 'completion' ? [prompt] : texts;
    num.messagesSeen = textsAll.length ? textsAll.filter((t) => seen(t) > 0).length / textsAll.length : 0;
    num.prefixSeen = lastText.length >= 40 && this.#seenPrefixes.has(lastText.slice(0, 40)) ? 1 : 0;
    const conversation = (list: Record<string, unknown>[]) =>
      JSON.stringify(list.map((m) => [m.role, textOf(m)]));
    num.historySeen =
      messages.length > 2 && this.#seenConversations.has(conversation(messages.slice(0, -2))) ? 1 : 0;
    num.requestSeen =
      this.#seenConversations.has(conversation(messages)) || seen(`prompt:${prompt}`) > 0 ? 1 : 0;
    for (const t of textsAll) this.#seenTexts.set(t, seen(t) + 1);
    if (prompt) this.#seenTexts.set(`prompt:${prompt}`, seen(`prompt:${prompt}`) + 1);
    if (lastText.length >= 40) this.#seenPrefixes.add(lastText.slice(0, 40));
    this.#seenConversations.add(conversation(messages));
    return { num, cat };
  }
}
