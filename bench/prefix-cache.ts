/**
 * Prefix-cache affinity (issue 44): an agent-like workload on three real CPU node daemons serving
 * the default chat model (gpumesh/mini-chat, npm start's file) at equal prices, with the
 * coordinator's prefix affinity on and off in the same run. Two networks (a coordinator and its
 * three daemons each, bench/prefix-cache-network.ts) run side by side; each round runs fresh
 * conversations on one, then the other (the order alternates), so the machine's load falls on
 * both alike. The workload (bench/prefix-cache-workload.ts): one ~2,000-token system prompt with
 * six tools, `--conversations` at once, `--turns` each, the history growing by the answers and
 * tool outputs — short statuses, and at the steps `--reads` a file the agent read (`--read-lines`
 * lines, ~1,300 tokens by default); `--reads ''` for statuses only.
 *
 * Printed for each side: time to first token p50/p95 (the first turns and the later ones apart),
 * prompt tokens and those the nodes prefilled (prompt − the cached tokens they reported), cached
 * tokens billed and the cache hit rate, the client's cost (the ledger's usage rows), and each
 * node's share of the requests. Goals: later turns' TTFT p50 ≥ 3× lower with affinity on, cost
 * ≥ 40 % lower, no node above 60 % of the traffic.
 *
 * Run: npm run -w bench prefix-cache -- [--conversations 4] [--turns 8] [--reads 1,4] [--read-lines 35]
 *   [--rounds 3] [--max-tokens 12]
 *   [--threads 1] [--concurrency 3] [--rules 40] [--think-ms 1000-3000] [--stagger-ms 3000]
 *   [--prefix-cache-bytes N] [--verbose]
 */
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { percentile } from './open-loop.js';
import { type BenchNetwork, MINI_CHAT_ID, startBenchNetwork } from './prefix-cache-network.js';
import { runConversation, systemPrompt, type Turn } from './prefix-cache-workload.js';
import { mulberry32 } from './ratio-summary.js';

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '4' },
    turns: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    'max-tokens': { type: 'string', default: '12' },
    nodes: { type: 'string', default: '3' },
    threads: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '3' },
    rules: { type: 'string', default: '40' },
    'think-ms': { type: 'string', default: '1000-3000' },
    'stagger-ms': { type: 'string', default: '3000' },
    reads: { type: 'string', default: '1,4' },
    'read-lines': { type: 'string', default: '35' },
    'prefix-cache-bytes': { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const CONVERSATIONS = Number(values.conversations);
const TURNS = Number(values.turns);
const ROUNDS = Number(values.rounds);
const MAX_TOKENS = Number(values['max-tokens']);
const SYSTEM = systemPrompt(Number(values.rules));
const [THINK_MIN_MS, THINK_MAX_MS] = values['think-ms'].split('-').map(Number) as [number, number];
const STAGGER_MS = Number(values['stagger-ms']);
const READS = new Set(values.reads ? values.reads.split(',').map(Number) : []);

/**
 * The agent's tool time after each turn of conversation `c` in `round`: drawn from a seeded
 * generator, so both sides wait alike.
 */
function thinkTimes(round: number, c: number): (turn: number) => number {
  const random = mulberry32(round * 1_000 + c);
  const times = Array.from({ length: TURNS }, () => THINK_MIN_MS + random() * (THINK_MAX_MS - THINK_MIN_MS));
  return (turn) => times[turn]!;
}

const networkOptions = {
  nodes: Number(values.nodes),
  threads: Number(values.threads),
  concurrency: Number(values.concurrency),
  ...(values['prefix-cache-bytes'] ? { prefixCacheBytes: Number(values['prefix-cache-bytes']) } : {}),
};
const networks: BenchNetwork[] = [];
try {
  // One after the other: each daemon loads the model while the machine is otherwise quiet.
  networks.push(await startBenchNetwork({ ...networkOptions, affinity: true }));
  networks.push(await startBenchNetwork({ ...networkOptions, affinity: false }));
  const [on, off] = networks as [BenchNetwork, BenchNetwork];
  const clientOf = (n: BenchNetwork) => new OpenAI({ apiKey: n.apiKey, baseURL: n.baseURL, maxRetries: 0 });
  const turns = new Map<BenchNetwork, Turn[]>([
    [on, []],
    [off, []],
  ]);
  // Warm-up (not counted): each node answers once, on a prompt of its own.
  for (const network of networks) {
    await Promise.all(
      network.nodeIds.map((_, i) =>
        runConversation({
          client: clientOf(network),
          model: MINI_CHAT_ID,
          system: 'Warm-up.',
          conversation: `warm-${i}`,
          turns: 1,
          maxTokens: 4,
        }),
      ),
    );
  }
  console.log(
    `prefix-cache: ${networkOptions.nodes} nodes per side (--threads ${networkOptions.threads}, --max-concurrency ${networkOptions.concurrency}), ${CONVERSATIONS} conversations × ${TURNS} turns per round and side (started ${STAGGER_MS} ms apart, ${THINK_MIN_MS}–${THINK_MAX_MS} ms of tool time between turns), ${ROUNDS} rounds, max_tokens ${MAX_TOKENS}`,
  );
  const slots = [...on.app.hub.index.offers(MINI_CHAT_ID)!.values()].map((e) => e.offer.maxConcurrency);
  console.log(`  jobs at once per node, as the coordinator routes them: ${slots.join(', ')}`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [on, off] : [off, on];
    for (const network of order) {
      const side = network.affinity ? 'on' : 'off';
      const startedAt = performance.now();
      const results = await Promise.all(
        Array.from({ length: CONVERSATIONS }, (_, c) =>
          runConversation({
            client: clientOf(network),
            model: MINI_CHAT_ID,
            system: SYSTEM,
            conversation: `r${round}-${side}-c${c}`,
            turns: TURNS,
            maxTokens: MAX_TOKENS,
            startDelayMs: c * STAGGER_MS,
            thinkMs: thinkTimes(round, c),
            reads: READS,
            readLines: Number(values['read-lines']),
          }),
        ),
      );
      const flat = results.flat();
      if (values.verbose)
        for (const t of flat)
          console.log(
            `    ${t.conversation} turn ${t.turn}: TTFT ${t.ttftMs.toFixed(0)} ms, total ${t.totalMs.toFixed(0)} ms, node …${t.node.slice(-4)}, prompt ${t.promptTokens}, node's cached ${network.claimed.get(t.lastContent)}, billed cached ${t.cachedTokens}${t.toolCalls ? ', tool calls' : ''}`,
          );
      turns.get(network)!.push(...flat);
      const later = sorted(flat.filter((t) => t.turn > 0).map((t) => t.ttftMs));
      console.log(
        `  round ${round + 1}, affinity ${side.padEnd(3)}: ${((performance.now() - startedAt) / 1000).toFixed(1)} s, later turns' TTFT p50 ${percentile(later, 0.5).toFixed(0)} ms, first turn's prompt ${flat[0]!.promptTokens} tokens`,
      );
    }
  }
  const figures = [await summarize(on, turns.get(on)!), await summarize(off, turns.get(off)!)] as const;
  printTable(...figures);
} finally {
  for (const network of networks) await network.close();
}

type Figures = Awaited<ReturnType<typeof summarize>>;

function sorted(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort();
}

/** One side's figures: its turns' timings and counts, and its ledger's usage rows. */
async function summarize(network: BenchNetwork, turns: readonly Turn[]) {
  await network.app.ctx.ledger.idle();
  const db = network.store.db;
  const rows = await db
    .selectFrom('usage_records')
    .select(['request_id', 'node_id', 'cost_nano', 'cache_discount_nano'])
    .where(
      'request_id',
      'in',
      turns.map((t) => t.requestId),
    )
    .execute();
  if (rows.length !== turns.length) throw new Error(`${rows.length} usage rows for ${turns.length} turns`);
  const costNano = rows.reduce((sum, r) => sum + BigInt(r.cost_nano), 0n);
  const discountNano = rows.reduce((sum, r) => sum + BigInt(r.cache_discount_nano ?? 0), 0n);
  const byNode = new Map<string, number>(network.nodeIds.map((id) => [id, 0]));
  for (const r of rows) byNode.set(r.node_id.toLowerCase(), (byNode.get(r.node_id.toLowerCase()) ?? 0) + 1);
  const first = turns.filter((t) => t.turn === 0);
  const later = turns.filter((t) => t.turn > 0);
  const claimedOf = (t: Turn) => {
    const claimed = network.claimed.get(t.lastContent);
    if (claimed === undefined) throw new Error(`no claim noted for ${t.conversation} turn ${t.turn}`);
    return Math.min(claimed, t.promptTokens);
  };
  const sum = (ts: readonly Turn[], f: (t: Turn) => number) => ts.reduce((s, t) => s + f(t), 0);
  const ttft = (ts: readonly Turn[]) => sorted(ts.map((t) => t.ttftMs));
  return {
    side: network.affinity ? 'on' : 'off',
    requests: turns.length,
    firstP50: percentile(ttft(first), 0.5),
    firstP95: percentile(ttft(first), 0.95),
    laterP50: percentile(ttft(later), 0.5),
    laterP95: percentile(ttft(later), 0.95),
    promptTokens: sum(turns, (t) => t.promptTokens),
    prefilled: sum(turns, (t) => t.promptTokens - claimedOf(t)),
    laterPrefilled: sum(later, (t) => t.promptTokens - claimedOf(t)),
    laterPrompt: sum(later, (t) => t.promptTokens),
    billedCached: sum(turns, (t) => t.cachedTokens),
    laterHits: later.filter((t) => t.cachedTokens > 0).length,
    laterTurns: later.length,
    costNano,
    /** What the same requests would have cost with no cached token billed. */
    uncachedNano: costNano + discountNano,
    shares: [...byNode.values()].map((n) => n / rows.length),
  };
}

function printTable(on: Figures, off: Figures): void {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const usd = (nano: bigint) => `$${(Number(nano) / 1e9).toFixed(6)}`;
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  const shares = (f: Figures) => f.shares.map(pct).join(' / ');
  const rows: [string, string, string, string][] = [
    ['requests', `${on.requests}`, `${off.requests}`, ''],
    [
      'TTFT p50, later turns',
      ms(on.laterP50),
      ms(off.laterP50),
      `off/on ${(off.laterP50 / on.laterP50).toFixed(2)}× (goal ≥ 3×)`,
    ],
    [
      'TTFT p95, later turns',
      ms(on.laterP95),
      ms(off.laterP95),
      `off/on ${(off.laterP95 / on.laterP95).toFixed(2)}×`,
    ],
    [
      'TTFT p50, first turns',
      ms(on.firstP50),
      ms(off.firstP50),
      `off/on ${(off.firstP50 / on.firstP50).toFixed(2)}×`,
    ],
    [
      'TTFT p95, first turns',
      ms(on.firstP95),
      ms(off.firstP95),
      `off/on ${(off.firstP95 / on.firstP95).toFixed(2)}×`,
    ],
    ['prompt tokens', `${on.promptTokens}`, `${off.promptTokens}`, ''],
    [
      'prefilled (prompt − node-reported cached)',
      `${on.prefilled}`,
      `${off.prefilled}`,
      `on/off ${(on.prefilled / off.prefilled).toFixed(3)}`,
    ],
    [
      '  of which later turns',
      `${on.laterPrefilled} of ${on.laterPrompt}`,
      `${off.laterPrefilled} of ${off.laterPrompt}`,
      '',
    ],
    ['cached tokens billed', `${on.billedCached}`, `${off.billedCached}`, ''],
    [
      'cache hit rate, tokens (billed cached ÷ prompt)',
      pct(on.billedCached / on.promptTokens),
      pct(off.billedCached / off.promptTokens),
      '',
    ],
    [
      'cache hit rate, later turns with cached tokens',
      pct(on.laterHits / on.laterTurns),
      pct(off.laterHits / off.laterTurns),
      '',
    ],
    [
      'client cost (ledger)',
      usd(on.costNano),
      usd(off.costNano),
      `${pct(1 - Number(on.costNano) / Number(off.costNano))} lower (goal ≥ 40 %)`,
    ],
    [
      '  the same without a cached token billed',
      usd(on.uncachedNano),
      usd(off.uncachedNano),
      `on ${pct(1 - Number(on.costNano) / Number(on.uncachedNano))} lower than that`,
    ],
    ['node shares', shares(on), shares(off), `max ${pct(Math.max(...on.shares))} on (goal ≤ 60 %)`],
  ];
  console.log(`\n${'affinity'.padEnd(48)}${'on'.padEnd(22)}${'off'.padEnd(22)}`);
  for (const [what, a, b, ratio] of rows)
    console.log(`${what.padEnd(48)}${a.padEnd(22)}${b.padEnd(22)}${ratio}`);
}
