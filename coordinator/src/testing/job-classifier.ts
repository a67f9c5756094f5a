/**
 * A node's-eye classifier of jobs for tests (issue 29): features of the job frame alone — kind,
 * stream, the request's members, order and values, message structure and lengths, character and
 * word statistics, overlap with fixed word lists (common English, and the canary generator's own
 * lists, as a node reading our source would), the old canaries' tells (public prompt pool, " (N)"),
 * and repetition across the jobs seen before (system prompts, messages, histories, templates) —
 * and two models trained on them: logistic regression and naive Bayes. `auc` scores a model.
 */
import { ADJECTIVES, ADVERBS, NAMES, NOUNS, PLACES, TECH, VERBS } from '../trust/canary-words.js';

export type Job = { kind: string; stream: boolean; request: Record<string, unknown> };
export type Features = { num: Record<string, number>; cat: Record<string, string> };

/** The 32 prompts of the old public canary pool (trust/canary-prompts.ts before issue 29). */
export const OLD_CANARY_PROMPTS: readonly string[] = [
  'Write a short poem about the sea at night.',
  'Explain how a bicycle gear works in simple terms.',
  'The three most important things to know about compound interest are',
  'Summarize the plot of a detective story set in a small village.',
  'List five ideas for a weekend trip near a big city.',
  'Translate to French: The meeting has been moved to Thursday afternoon.',
  'What are the pros and cons of remote work?',
  'Once upon a time, in a kingdom by the mountains,',
  'Describe the taste of a ripe mango to someone who has never had one.',
  'Give me a recipe for a quick vegetable soup.',
  'How do vaccines train the immune system?',
  'Write a product description for a waterproof hiking backpack.',
  'Dear team, I wanted to follow up on',
  'The history of the printing press begins',
  'Explain the difference between a list and a tuple in Python.',
  'What should I check before buying a used car?',
  'Draft a polite reply declining a meeting invitation.',
  'In machine learning, overfitting means',
  'Tell me a fun fact about octopuses.',
  'Write a haiku about autumn leaves.',
  'How does a refrigerator keep food cold?',
  'Suggest names for a small coffee shop.',
  'The main causes of the French Revolution were',
  'Write a limerick about a cat who loves boxes.',
  'What is the capital of Australia, and why is it not Sydney?',
  'Explain recursion with an everyday example.',
  'Give three tips for better sleep.',
  'def fibonacci(n):',
  'Write the opening line of a science fiction novel.',
  'Compare electric cars and hybrid cars briefly.',
  'How do I politely ask my neighbor to lower the music?',
  'Describe a sunrise over a desert.',
];

/** A canary as the coordinator sent them before issue 29 (canary-runner.ts `runOnce`). */
export function oldCanary(model: string, random: () => number): Job {
  const base = OLD_CANARY_PROMPTS[Math.floor(random() * OLD_CANARY_PROMPTS.length)]!;
  const prompt = random() < 0.5 ? base : `${base} (${1 + Math.floor(random() * 100)})`;
  return { kind: 'completion', stream: false, request: { model, prompt, max_tokens: 32, temperature: 1 } };
}

const FUNCTION_WORDS = new Set(
  `the a an and or but if of to in on at by for with from as is are was were be been being it its this that
  these those i you he she we they me him her us them my your his our their what which who whom how why when
  where not no do does did have has had can could will would should may might must so than then there here
  about into over after before up down out just also very all any some each more most such only own same too`
    .split(/\s+/)
    .filter(Boolean),
);

/** A fixed list of common English words (function words and ~250 frequent others). */
const COMMON_WORDS = new Set([
  ...FUNCTION_WORDS,
  ...`time year people way day man thing woman life child world school state family student group country
  problem hand part place case week company system program question work government number night point
  home water room mother area money story fact month lot right study book eye job word business issue side
  kind head house service friend father power hour game line end member law car city community name
  president team minute idea kid body information back parent face others level office door health person
  art war history party result change morning reason research girl guy moment air teacher force education
  get make go know take see come think look want give use find tell ask seem feel try leave call need
  become put mean keep let begin help talk turn start show hear play run move like live believe hold bring
  happen write provide sit stand lose pay meet include continue set learn lead understand watch follow stop
  create speak read spend grow open walk win offer remember love consider appear buy wait serve die send
  expect build stay fall cut reach kill remain good new first last long great little old big high different
  small large next early young important few public bad able best better sure free true whole clear easy
  hard late simple short quick please thanks example code data file list error question answer text email`
    .split(/\s+/)
    .filter(Boolean),
]);

/** The canary generator's own words, as a node reading the source would list them. */
const GENERATOR_WORDS = new Set(
  [
    ...NOUNS,
    ...ADJECTIVES,
    ...ADVERBS,
    ...NAMES,
    ...PLACES,
    ...TECH,
    ...VERBS.flatMap((v) => v.split('|')),
  ].map((w) => w.toLowerCase()),
);

const COMMON_BIGRAMS = new Set(
  `of the|in the|to the|on the|for the|is a|it is|i have|can you|how do|do i|i am|want to|need to|this is|and the|
  with the|from the|at the|by the|is the|to be|will be|have a|of a|in a|as a|is not|that the|you can|if you|i want|
  what is|how to|there are|there is|i need|my new|for a|it was|i was|going to|would like|like to|how can|help me`
    .split('|')
    .map((b) => b.trim()),
);

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

export function textStats(text: string, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  const n = Math.max(1, text.length);
  const count = (re: RegExp) => text.match(re)?.length ?? 0;
  const lines = text.split('\n');
  out[`${prefix}logChars`] = Math.log1p(text.length);
  out[`${prefix}lines`] = Math.log1p(lines.length);
  out[`${prefix}blankLines`] = lines.filter((l) => l.trim() === '').length / lines.length;
  out[`${prefix}letters`] = count(/\p{L}/gu) / n;
  out[`${prefix}digits`] = count(/\d/g) / n;
  out[`${prefix}spaces`] = count(/\s/g) / n;
  out[`${prefix}upper`] = count(/\p{Lu}/gu) / n;
  out[`${prefix}punct`] = count(/[.,;:!?'"()-]/g) / n;
  out[`${prefix}codeSymbols`] = count(/[{}()[\];=<>_$|&\\`*#]/g) / n;
  out[`${prefix}nonAscii`] = count(/[^\x00-\x7f]/g) / n;
  out[`${prefix}questions`] = count(/\?/g);
  out[`${prefix}fences`] = count(/```/g);
  out[`${prefix}bold`] = count(/\*\*/g);
  out[`${prefix}listLines`] = lines.filter((l) => /^\s*([-*•]|\d+[.)])\s/.test(l)).length / lines.length;
  const words = text.match(/[A-Za-z']+/g) ?? [];
  const lower = words.map((w) => w.toLowerCase());
  const wn = Math.max(1, words.length);
  out[`${prefix}logWords`] = Math.log1p(words.length);
  const lengths = words.map((w) => w.length);
  const mean = lengths.reduce((s, x) => s + x, 0) / wn;
  out[`${prefix}wordLength`] = mean;
  out[`${prefix}wordLengthSd`] = Math.sqrt(lengths.reduce((s, x) => s + (x - mean) ** 2, 0) / wn);
  out[`${prefix}functionWords`] = lower.filter((w) => FUNCTION_WORDS.has(w)).length / wn;
  out[`${prefix}commonWords`] = lower.filter((w) => COMMON_WORDS.has(w)).length / wn;
  out[`${prefix}generatorWords`] =
    lower.filter((w) => GENERATOR_WORDS.has(w) || GENERATOR_WORDS.has(w.replace(/(es|s|ed|ing|d)$/, '')))
      .length / wn;
  out[`${prefix}typeToken`] = new Set(lower.slice(0, 100)).size / Math.max(1, Math.min(100, lower.length));
  out[`${prefix}repeatWords`] = 1 - new Set(lower).size / wn;
  const sentences = text.split(/[.!?]+(?:\s|$)/).filter((s) => s.trim() !== '');
  out[`${prefix}sentences`] = Math.log1p(sentences.length);
  out[`${prefix}wordsPerSentence`] = words.length / Math.max(1, sentences.length);
  let caps = 0;
  for (let i = 1; i < words.length; i++) if (/^[A-Z]/.test(words[i]!)) caps++;
  out[`${prefix}innerCaps`] = caps / wn;
  let bigrams = 0;
  for (let i = 1; i < lower.length; i++) if (COMMON_BIGRAMS.has(`${lower[i - 1]} ${lower[i]}`)) bigrams++;
  out[`${prefix}commonBigrams`] = bigrams / wn;
  out[`${prefix}lowerStart`] = lines.filter((l) => /^[a-z]/.test(l)).length / lines.length;
  return out;
}

/**
 * Families of features: `frame` the job frame and request structure (kind, stream, members and
 * their order, values, message roles and counts, lengths, the old pool and " (N)"); `repetition`
 * what recurs across the jobs seen before; `words` character and word statistics of the texts
 * against fixed lists; `whiteBox` overlap with the canary generator's own word lists.
 */
export const FEATURE_FAMILIES = ['frame', 'repetition', 'words', 'whiteBox'] as const;
export type FeatureFamily = (typeof FEATURE_FAMILIES)[number];

const REPETITION = new Set([
  'systemSeen',
  'lastSeen',
  'messagesSeen',
  'prefixSeen',
  'historySeen',
  'requestSeen',
]);
const WORD_CATEGORIES = new Set(['lastEnd', 'lastStart']);
const LENGTHS = /^(last_)?(logChars|lines|logWords)$|^log(System|Last|First)Chars$/;

/** The family a feature belongs to. */
export function familyOf(name: string, categorical: boolean): FeatureFamily {
  if (name.endsWith('generatorWords')) return 'whiteBox';
  if (REPETITION.has(name)) return 'repetition';
  if (categorical) return WORD_CATEGORIES.has(name) ? 'words' : 'frame';
  if (LENGTHS.test(name)) return 'frame';
  return Object.hasOwn(FRAME_NUMBERS, name) || name.startsWith('has_') ? 'frame' : 'words';
}

const FRAME_NUMBERS = {
  logMaxTokens: 1,
  stops: 1,
  stopChars: 1,
  messages: 1,
  userMessages: 1,
  assistantMessages: 1,
  trailingNumber: 1,
  oldPool: 1,
};

/** `features` with only the families in `families`. */
export function only(features: Features, families: readonly FeatureFamily[]): Features {
  const keep = (name: string, categorical: boolean) => families.includes(familyOf(name, categorical));
  return {
    num: Object.fromEntries(Object.entries(features.num).filter(([k]) => keep(k, false))),
    cat: Object.fromEntries(Object.entries(features.cat).filter(([k]) => keep(k, true))),
  };
}

export type Model = (f: Features) => number;

/** Logistic regression (standardized numbers, one-hot categories, L2), trained by gradient descent. */
export function trainLogistic(data: Features[], labels: number[], epochs = 400): Model {
  const numKeys = Object.keys(data[0]!.num);
  const mean: number[] = [];
  const sd: number[] = [];
  for (const [k, key] of numKeys.entries()) {
    const xs = data.map((d) => d.num[key] ?? 0);
    mean[k] = xs.reduce((s, x) => s + x, 0) / xs.length;
    sd[k] = Math.sqrt(xs.reduce((s, x) => s + (x - mean[k]!) ** 2, 0) / xs.length) || 1;
  }
  const index = new Map<string, number>();
  for (const d of data)
    for (const [k, v] of Object.entries(d.cat))
      if (!index.has(`${k}=${v}`)) index.set(`${k}=${v}`, index.size);
  const width = numKeys.length + index.size;
  const vector = (f: Features): Map<number, number> => {
    const v = new Map<number, number>();
    numKeys.forEach((key, k) => {
      v.set(k, ((f.num[key] ?? 0) - mean[k]!) / sd[k]!);
    });
    for (const [k, value] of Object.entries(f.cat)) {
      const i = index.get(`${k}=${value}`);
      if (i !== undefined) v.set(numKeys.length + i, 1);
    }
    return v;
  };
  const xs = data.map(vector);
  const w = new Float64Array(width);
  let b = 0;
  const rate = 0.5;
  const l2 = 1e-3;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const grad = new Float64Array(width);
    let gb = 0;
    xs.forEach((x, i) => {
      let z = b;
      for (const [k, v] of x) z += w[k]! * v;
      const err = 1 / (1 + Math.exp(-z)) - labels[i]!;
      for (const [k, v] of x) grad[k]! += err * v;
      gb += err;
    });
    for (let k = 0; k < width; k++) w[k]! -= rate * (grad[k]! / xs.length + l2 * w[k]!);
    b -= (rate * gb) / xs.length;
  }
  return (f) => {
    let z = b;
    for (const [k, v] of vector(f)) z += w[k]! * v;
    return z;
  };
}

/** Naive Bayes: numbers in training-quantile bins, categories as they are, Laplace smoothing. */
export function trainNaiveBayes(data: Features[], labels: number[], bins = 10): Model {
  const numKeys = Object.keys(data[0]!.num);
  const edges = new Map<string, number[]>();
  for (const key of numKeys) {
    const sorted = data.map((d) => d.num[key] ?? 0).sort((a, b) => a - b);
    edges.set(
      key,
      Array.from({ length: bins - 1 }, (_, i) => sorted[Math.floor(((i + 1) * sorted.length) / bins)]!),
    );
  }
  const tokens = (f: Features): string[] => {
    const out: string[] = [];
    for (const key of numKeys) {
      const x = f.num[key] ?? 0;
      out.push(`${key}#${edges.get(key)!.filter((e) => x > e).length}`);
    }
    for (const [k, v] of Object.entries(f.cat)) out.push(`${k}=${v}`);
    return out;
  };
  const counts = [new Map<string, number>(), new Map<string, number>()];
  const totals = [0, 0];
  const values = new Map<string, Set<string>>();
  data.forEach((d, i) => {
    const y = labels[i]!;
    totals[y]!++;
    for (const t of tokens(d)) {
      counts[y]!.set(t, (counts[y]!.get(t) ?? 0) + 1);
      const feature = t.split(/[#=]/)[0]!;
      if (!values.has(feature)) values.set(feature, new Set());
      values.get(feature)!.add(t);
    }
  });
  return (f) => {
    let score = Math.log((totals[1]! + 1) / (totals[0]! + 1));
    for (const t of tokens(f)) {
      const arity = (values.get(t.split(/[#=]/)[0]!)?.size ?? 1) + 1;
      const p1 = ((counts[1]!.get(t) ?? 0) + 1) / (totals[1]! + arity);
      const p0 = ((counts[0]!.get(t) ?? 0) + 1) / (totals[0]! + arity);
      score += Math.log(p1 / p0);
    }
    return score;
  };
}

/** ROC AUC of `scores` for `labels` (1 = canary): the chance a canary scores above a client job. */
export function auc(scores: number[], labels: number[]): number {
  const order = scores.map((s, i) => [s, labels[i]!] as const).sort((a, b) => a[0] - b[0]);
  let rankSum = 0;
  let positives = 0;
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j < order.length && order[j]![0] === order[i]![0]) j++;
    const rank = (i + j + 1) / 2; // average rank of the tie group (1-based)
    for (let k = i; k < j; k++) {
      if (order[k]![1] === 1) {
        rankSum += rank;
        positives++;
      }
    }
    i = j;
  }
  const negatives = order.length - positives;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/** Each numeric feature's own AUC, the most separating first (what to fix when the model wins). */
export function featureAucs(data: Features[], labels: number[]): [string, number][] {
  return Object.keys(data[0]!.num)
    .map((key): [string, number] => {
      const a = auc(
        data.map((d) => d.num[key] ?? 0),
        labels,
      );
      return [key, Math.max(a, 1 - a)];
    })
    .sort((a, b) => b[1] - a[1]);
}
