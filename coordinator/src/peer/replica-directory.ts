/**
 * The replicas' shared view of the network. Each replica announces the nodes it holds (their
 * offers, tier, scopes, presence and load) on a Redis channel: the whole list every
 * FULL_LIST_PERIODS × `announceMs` (and when it hears a replica it did not know), and in between,
 * every `announceMs` and within a quarter of it after a change, only the nodes that changed and the
 * ids of those that left (numbered: a change list is applied only right after the one before it, so
 * after a lost message a replica waits for the next whole list). Each replica indexes the others' nodes as remote (`via` the holding replica),
 * so its router picks among every live node of the network and relays a job for a remote node over
 * peer-RPC (peer-transport.ts). A replica whose announcements stop for three periods is dropped with its
 * nodes; one that closes announces an empty list first. A node held here is never replaced by
 * another replica's announcement of it.
 *
 * Redis is not trusted with routing: an announcement names prices and where jobs go, so each one
 * carries an HMAC under the network's peer key (`<hex mac>.<json>`) and the time it was made; one
 * that does not verify, or is more than a minute old (a replay), is ignored.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import type { Redis } from 'ioredis';
import type { Hub } from '../hub/hub.js';
import type { IndexedNode, ModelOffer, RemoteHolder } from '../router/pick-index.js';
import { AnnouncedNodes } from './announced-nodes.js';

const Price = Type.String({ pattern: '^[0-9]{1,40}$' });
const AnnouncedOffer = Type.Object({
  modelId: Type.String({ minLength: 1, maxLength: 256 }),
  family: Type.String({ minLength: 1, maxLength: 64 }),
  contextLength: Type.Integer({ minimum: 0 }),
  maxConcurrency: Type.Integer({ minimum: 1 }),
  priceIn: Price,
  priceOut: Price,
  currency: Type.Union([Type.Literal('USD'), Type.Literal('NATIVE')]),
  /** The file's GGUF type, as the announcing replica's catalog knows it (provider.quantizations). */
  quant: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
});
const AnnouncedNode = Type.Object({
  nodeId: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
  owner: Type.Union([Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }), Type.Null()]),
  tierRank: Type.Integer({ minimum: 0, maximum: 16 }),
  tier: Type.String({ maxLength: 32 }),
  role: Type.String({ maxLength: 32 }),
  scopes: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 }),
  state: Type.String({ maxLength: 32 }),
  load: Type.Number({ minimum: 0, maximum: 1 }),
  models: Type.Array(AnnouncedOffer, { maxItems: 1024 }),
});
const Announcement = Type.Object({
  replicaId: Type.String({ minLength: 1, maxLength: 128 }),
  /** When it was made, ms since the epoch. */
  at: Type.Integer({ minimum: 0 }),
  peerUrl: Type.String({ minLength: 1, maxLength: 300 }),
  announceMs: Type.Integer({ minimum: 1 }),
  /** Numbers this replica's announcements, 1, 2, 3 … (absent: each is a whole list). */
  seq: Type.Optional(Type.Integer({ minimum: 1 })),
  /** True: `nodes` are only those that changed since announcement `seq` − 1, `removed` those that left. */
  delta: Type.Optional(Type.Boolean()),
  removed: Type.Optional(Type.Array(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }))),
  nodes: Type.Array(AnnouncedNode),
});
export type Announcement = Static<typeof Announcement>;
let announcementCheck: TypeCheck<typeof Announcement> | undefined;
/**
 * Whether a parsed announcement has the shape of one: compiled once, on first use (a whole list of
 * 10,000 nodes, ~5 MB, checks in ~40 ms instead of ~120 ms interpreted, here).
 */
function isAnnouncement(value: unknown): value is Announcement {
  announcementCheck ??= TypeCompiler.Compile(Announcement);
  return announcementCheck.Check(value);
}
type AnnouncedNode = Static<typeof AnnouncedNode>;

export type ReplicaDirectoryOptions = {
  hub: Hub;
  /** A connection for publishing, and one this directory puts in subscriber mode. */
  publisher: Redis;
  subscriber: Redis;
  namespace: string;
  replicaId: string;
  peerUrl: string;
  /** The network's peer MAC key (peer-keys.ts): announcements are made and checked with it. */
  macKey: Uint8Array;
  announceMs: number;
  log?: { warn(obj: object, msg: string): void };
};

type ReplicaView = {
  lastSeen: number;
  announceMs: number;
  /** nodeId → what the index was last given for it (to upsert only on a change). */
  nodes: Map<string, string>;
  /** The number of its last announcement applied; undefined until a whole list (after a gap). */
  seq: number | undefined;
};

/** Periods between whole lists; the announcements between carry only what changed. */
export const FULL_LIST_PERIODS = 10;

/** Periods of silence after which a replica counts as gone. */
const SILENT_PERIODS = 3;
/** Oldest (or furthest ahead, for clock skew) an announcement may be. */
const MAX_ANNOUNCEMENT_AGE_MS = 60_000;

/** An announcement as it goes on the channel: its HMAC, a dot, its JSON. */
export function sealAnnouncement(announcement: Announcement, macKey: Uint8Array): string {
  const json = JSON.stringify(announcement);
  return `${mac(json, macKey)}.${json}`;
}

function mac(text: string, key: Uint8Array): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

export class ReplicaDirectory {
  readonly #o: ReplicaDirectoryOptions;
  readonly #channel: string;
  readonly #replicas = new Map<string, ReplicaView>();
  #timer: NodeJS.Timeout | undefined;
  #lastVersion = -1;
  #lastAnnounced = 0;
  #lastFull = 0;
  /** A replica appeared: it needs this one's whole list. */
  #fullWanted = false;
  #seq = 0;
  readonly #announced = new AnnouncedNodes();
  #closed = false;

  constructor(options: ReplicaDirectoryOptions) {
    this.#o = options;
    this.#channel = `${options.namespace}:replicas`;
  }

  async start(): Promise<void> {
    this.#o.subscriber.on('message', (channel: string, text: string) => {
      if (channel === this.#channel) this.#receive(text);
    });
    await this.#o.subscriber.subscribe(this.#channel);
    // Changes go out within a quarter period, and everything once a period at least.
    const tick = Math.max(5, Math.floor(this.#o.announceMs / 4));
    this.#timer = setInterval(() => this.#tick(), tick);
    this.#timer.unref();
    await this.announce();
  }

  /** Publishes the nodes this replica holds now: all of them, or (`full` false) those that changed. */
  async announce(full = true): Promise<void> {
    const { hub } = this.#o;
    const now = Date.now();
    this.#lastVersion = hub.index.localVersion;
    this.#lastAnnounced = now;
    const local: IndexedNode[] = [];
    if (!this.#closed) for (const node of hub.index.nodes()) if (!node.via) local.push(node);
    const { changed, removed } = this.#announced.update(local);
    if (full) {
      this.#lastFull = now;
      this.#fullWanted = false;
    }
    const announcement: Announcement = {
      replicaId: this.#o.replicaId,
      at: now,
      peerUrl: this.#o.peerUrl,
      announceMs: this.#o.announceMs,
      seq: ++this.#seq,
      ...(full ? {} : { delta: true, removed }),
      nodes: (full ? local : changed).map((node) => this.#describe(node)),
    };
    await this.#o.publisher.publish(this.#channel, sealAnnouncement(announcement, this.#o.macKey));
  }

  /** Announces that this replica holds nothing any more, stops listening, forgets remote nodes. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.announce().catch(() => {});
    await this.#o.subscriber.unsubscribe(this.#channel).catch(() => {});
    for (const replicaId of [...this.#replicas.keys()]) this.#forget(replicaId);
  }

  #tick(): void {
    const now = Date.now();
    for (const [replicaId, view] of this.#replicas) {
      if (now - view.lastSeen > SILENT_PERIODS * view.announceMs) this.#forget(replicaId);
    }
    const changed = this.#o.hub.index.localVersion !== this.#lastVersion;
    const full = this.#fullWanted || now - this.#lastFull >= FULL_LIST_PERIODS * this.#o.announceMs;
    if (full || changed || now - this.#lastAnnounced >= this.#o.announceMs) {
      this.announce(full).catch((error: unknown) =>
        this.#o.log?.warn({ err: error }, 'could not announce this replica’s nodes'),
      );
    }
  }

  #describe(node: IndexedNode): AnnouncedNode {
    const session = this.#o.hub.session(node.nodeId);
    return {
      nodeId: node.nodeId,
      owner: node.owner,
      tierRank: node.tierRank,
      tier: session?.tier ?? 'none',
      role: session?.role ?? 'unknown',
      scopes: [...node.scopes],
      state: node.state,
      load: node.reportedLoad,
      models: [...node.entries.values()].map(({ offer }) => ({
        modelId: offer.modelId,
        family: offer.family,
        contextLength: offer.contextLength,
        maxConcurrency: offer.maxConcurrency,
        priceIn: offer.priceIn.toString(),
        priceOut: offer.priceOut.toString(),
        currency: offer.currency,
        ...(offer.quant ? { quant: offer.quant } : {}),
      })),
    };
  }

  #receive(text: string): void {
    const dot = text.indexOf('.');
    const given = Buffer.from(dot === 64 ? text.slice(0, dot) : '', 'hex');
    const json = text.slice(dot + 1);
    const expected = Buffer.from(mac(json, this.#o.macKey), 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      this.#o.log?.warn({ bytes: text.length }, 'ignored a replica announcement without a valid MAC');
      return;
    }
    let announcement: unknown;
    try {
      announcement = JSON.parse(json);
    } catch {
      announcement = undefined;
    }
    if (!isAnnouncement(announcement)) {
      this.#o.log?.warn({ bytes: text.length }, 'ignored a malformed replica announcement');
      return;
    }
    if (Math.abs(Date.now() - announcement.at) > MAX_ANNOUNCEMENT_AGE_MS) {
      this.#o.log?.warn({ replicaId: announcement.replicaId }, 'ignored a stale replica announcement');
      return;
    }
    if (announcement.replicaId === this.#o.replicaId || this.#closed) return;
    this.#apply(announcement);
  }

  #apply(a: Announcement): void {
    const { index } = this.#o.hub;
    const holder: RemoteHolder = { replicaId: a.replicaId, peerUrl: a.peerUrl };
    let view = this.#replicas.get(a.replicaId);
    if (!view) {
      view = { lastSeen: 0, announceMs: a.announceMs, nodes: new Map(), seq: undefined };
      this.#replicas.set(a.replicaId, view);
      this.#fullWanted = true; // a new replica: it gets our whole list at the next tick
    }
    view.lastSeen = Date.now();
    view.announceMs = a.announceMs;
    if (a.delta) {
      // Changes apply on top of the announcement before them only; after a gap, wait for a whole list.
      const follows = view.seq !== undefined && a.seq === view.seq + 1;
      view.seq = follows ? a.seq : undefined;
      if (!follows) return;
    } else {
      view.seq = a.seq;
    }
    const seen = new Set<string>();
    for (const node of a.nodes) {
      seen.add(node.nodeId);
      // A node held here wins: its own session is the truth.
      if (this.#o.hub.session(node.nodeId)) continue;
      const signature = JSON.stringify([
        a.peerUrl,
        node.owner,
        node.tierRank,
        node.tier,
        node.role,
        node.scopes,
        node.models,
      ]);
      const indexed = index.node(node.nodeId);
      if (!indexed || indexed.via?.replicaId !== a.replicaId || view.nodes.get(node.nodeId) !== signature) {
        index.upsert({
          nodeId: node.nodeId,
          via: holder,
          labels: { role: node.role, tier: node.tier },
          owner: node.owner,
          tierRank: node.tierRank,
          scopes: new Set(node.scopes),
          state: node.state,
          models: node.models.map(toOffer),
        });
      } else {
        index.setState(node.nodeId, node.state);
      }
      index.setLoad(node.nodeId, node.load);
      view.nodes.set(node.nodeId, signature);
    }
    const gone = a.delta ? (a.removed ?? []) : [...view.nodes.keys()].filter((nodeId) => !seen.has(nodeId));
    for (const nodeId of gone) if (view.nodes.has(nodeId)) this.#drop(a.replicaId, view, nodeId);
  }

  #forget(replicaId: string): void {
    const view = this.#replicas.get(replicaId);
    if (!view) return;
    for (const nodeId of [...view.nodes.keys()]) this.#drop(replicaId, view, nodeId);
    this.#replicas.delete(replicaId);
  }

  #drop(replicaId: string, view: ReplicaView, nodeId: string): void {
    view.nodes.delete(nodeId);
    const { index } = this.#o.hub;
    // Only if the index still has it from that replica (it may have moved here or elsewhere).
    if (index.node(nodeId)?.via?.replicaId === replicaId) index.remove(nodeId);
  }
}

function toOffer(offer: Static<typeof AnnouncedOffer>): ModelOffer {
  return {
    modelId: offer.modelId,
    family: offer.family,
    contextLength: offer.contextLength,
    maxConcurrency: offer.maxConcurrency,
    priceIn: BigInt(offer.priceIn),
    priceOut: BigInt(offer.priceOut),
    currency: offer.currency,
    ...(offer.quant ? { quant: offer.quant } : {}),
  };
}
