/**
 * A fleet of simulated nodes (sim-node.ts) in a process of its own, for bench/network-sim.ts: the
 * coordinator's CPU and memory are measured apart from the nodes'. Node i connects to
 * urls[i % urls.length]; a node whose session ends reconnects after `reconnectMs` unless stopping.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/sim-fleet-process.ts '<json FleetSettings>'
 * Commands on stdin, one JSON a line: {"cmd":"churn","rate":20,"durationS":10} (drain, vanish or
 * go silent, then come back), {"cmd":"presence","rate":500,"durationS":10} (load changes),
 * {"cmd":"status"}, {"cmd":"stop"}. Events on stdout, one JSON a line: keys, progress, connected,
 * done, status.
 */
import { createInterface } from 'node:readline';
import { simIdentities } from './sim-identities.js';
import { SimNode } from './sim-node.js';

export type FleetSettings = {
  urls: string[];
  nodes: number;
  /** The first node's number (a fleet split over processes: sim-processes.ts). */
  first?: number;
  seed: string;
  models: number;
  jobMs: number;
  capacity: number;
  /** Handshakes in flight at once while connecting. */
  connectConcurrency: number;
  reconnectMs: number;
};

export type FleetCommand =
  | { cmd: 'churn'; rate: number; durationS: number }
  | { cmd: 'presence'; rate: number; durationS: number }
  | { cmd: 'status' }
  | { cmd: 'stop' };

const settings = JSON.parse(process.argv[2]!) as FleetSettings;
const emit = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);

const first = settings.first ?? 0;
const identities = (
  await simIdentities(settings.seed, first + settings.nodes, settings.models, (made) =>
    emit({ event: 'keys', made }),
  )
).slice(first);
const ready = new Set<SimNode>();
let stopping = false;
/** Every node was ready once (the first connection of the fleet is over). */
let connected = false;
let reconnects = 0;
const urlOf = new Map<SimNode, string>();
const waiting: SimNode[] = [];
let handshaking = 0;

function startNext(): void {
  while (handshaking < settings.connectConcurrency && waiting.length > 0) {
    const node = waiting.shift()!;
    handshaking++;
    node.connect(urlOf.get(node)!);
  }
}

const nodes = identities.map((identity, i) => {
  const node = new SimNode(identity, {
    jobMs: settings.jobMs,
    capacity: settings.capacity,
    onReady: (n) => {
      handshaking--;
      ready.add(n);
      if (!connected && ready.size % 1000 === 0) emit({ event: 'progress', ready: ready.size });
      // 99.5 %: on a starved machine a few sessions time out and reconnect while the last ones connect.
      if (!connected && ready.size >= Math.ceil(settings.nodes * 0.995)) {
        connected = true;
        emit({ event: 'connected', ready: ready.size });
      }
      startNext();
    },
    onClosed: (n, _code, wasReady) => {
      if (wasReady) ready.delete(n);
      else handshaking--;
      if (stopping) return;
      setTimeout(() => {
        reconnects++;
        waiting.push(n);
        startNext();
      }, settings.reconnectMs).unref();
    },
  });
  urlOf.set(node, settings.urls[i % settings.urls.length]!);
  return node;
});

// One ticker for every node's heartbeat, not a timer each.
const ticker = setInterval(() => {
  const now = Date.now();
  for (const node of nodes) node.tick(now);
}, 100);

/** Runs `act` on a random ready node `rate` times a second for `durationS`; resolves with the count. */
async function everySecond(rate: number, durationS: number, act: (node: SimNode) => void): Promise<number> {
  const start = Date.now();
  let done = 0;
  while (Date.now() - start < durationS * 1000) {
    const due = Math.floor(((Date.now() - start) / 1000) * rate);
    const list = [...ready];
    while (done < due && list.length > 0) {
      act(list[Math.floor(Math.random() * list.length)]!);
      done++;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return done;
}

async function handle(command: FleetCommand): Promise<void> {
  switch (command.cmd) {
    case 'churn': {
      const kinds = { drain: 0, vanish: 0, mute: 0 };
      const events = await everySecond(command.rate, command.durationS, (node) => {
        const r = Math.random();
        const kind = r < 0.45 ? 'drain' : r < 0.9 ? 'vanish' : 'mute';
        kinds[kind]++;
        node[kind]();
      });
      emit({ event: 'done', cmd: 'churn', events, kinds });
      return;
    }
    case 'presence': {
      const events = await everySecond(command.rate, command.durationS, (node) => {
        node.phantom = node.phantom === 0 ? 1 : 0;
        node.presence();
      });
      emit({ event: 'done', cmd: 'presence', events });
      return;
    }
    case 'status':
      emit({
        event: 'status',
        ready: ready.size,
        jobs: nodes.reduce((n, node) => n + node.jobs, 0),
        reconnects,
        rssBytes: process.memoryUsage().rss,
      });
      return;
    case 'stop':
      stopping = true;
      clearInterval(ticker);
      for (const node of nodes) node.vanish();
      emit({ event: 'done', cmd: 'stop' });
      setTimeout(() => process.exit(0), 200);
      return;
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim()) void handle(JSON.parse(line) as FleetCommand);
});
process.on('SIGTERM', () => process.exit(0));
emit({ event: 'keys', made: identities.length, ready: true });
waiting.push(...nodes);
startNext();
