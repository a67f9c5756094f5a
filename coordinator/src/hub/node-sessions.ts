/**
 * Uptime: each replica logs the node sessions it holds (`node_sessions`: up when a node becomes
 * routable, down when its session ends, `last_seen_at` renewed while it lives, so a replica that
 * dies mid-session leaves an interval bounded by its last renewal). A node's uptime over a window
 * is the union of its intervals, from every replica, over the part of the window since the node was
 * first seen (its first session's start): a node that connected a minute ago and stayed is 100 %,
 * not 0.07 % of a day.
 */
import { type Kysely, sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';

/** How often a replica renews `last_seen_at` of the sessions it holds. */
export const SESSION_RENEW_MS = 30_000;

export class NodeSessionLog {
  readonly #db: Kysely<Database>;
  readonly #replica: string;
  readonly #now: () => number;
  /** Writes in order, so a quick up/down never lands as down/up. */
  #tail: Promise<unknown> = Promise.resolve();

  constructor(db: Kysely<Database>, replica: string, now: () => number) {
    this.#db = db;
    this.#replica = replica;
    this.#now = now;
  }

  /** Records a node session starting or ending on this replica (errors go to `onError`). */
  note(event: 'up' | 'down', nodeId: string, onError: (error: unknown) => void): void {
    const node = nodeId.toLowerCase();
    const now = this.#now();
    this.#tail = this.#tail
      .then(() => (event === 'up' ? this.#up(node, now) : this.#down(node, now)))
      .catch(onError);
  }

  async #up(node: string, now: number): Promise<void> {
    const open = await this.#db
      .selectFrom('node_sessions')
      .select('id')
      .where('node_id', '=', node)
      .where('replica', '=', this.#replica)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    if (open) return; // a reconnect that replaced the session: the interval goes on
    await this.#db
      .insertInto('node_sessions')
      .values({
        id: newId(now),
        node_id: node,
        replica: this.#replica,
        started_at: now,
        last_seen_at: now,
        ended_at: null,
      })
      .execute();
  }

  async #down(node: string, now: number): Promise<void> {
    await this.#db
      .updateTable('node_sessions')
      .set({ ended_at: now, last_seen_at: now })
      .where('node_id', '=', node)
      .where('replica', '=', this.#replica)
      .where('ended_at', 'is', null)
      .execute();
  }

  /** Renews this replica's open sessions; at start, first closes what an earlier run left open. */
  async renew(options: { closeLeftOpen?: boolean } = {}): Promise<void> {
    await this.#tail;
    let update = this.#db
      .updateTable('node_sessions')
      .where('replica', '=', this.#replica)
      .where('ended_at', 'is', null);
    if (options.closeLeftOpen) {
      // Sessions of an earlier process of this replica id ended at its last renewal.
      await update.set({ ended_at: sql<number>`last_seen_at` }).execute();
      return;
    }
    update = update.set({ last_seen_at: this.#now() });
    await update.execute();
  }
}

export type UptimeOptions = {
  /**
   * Measure over the whole window even for a node first seen inside it (a new node starts low):
   * reputation's U does, so a fresh node id earns no uptime credit it has not shown yet.
   */
  wholeWindow?: boolean;
};

/**
 * Fraction of [max(from, first seen), to] each node was connected to some replica, 0…1: the union
 * of its session intervals. An open session counts up to now when the node is `live`, else to its
 * last renewal. A node never seen before `to` is 0. With `wholeWindow`, over [from, to].
 */
export async function uptimeOf(
  db: Kysely<Database>,
  nodeIds: readonly string[],
  window: { from: number; to: number },
  isLive: (nodeId: string) => boolean,
  options: UptimeOptions = {},
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (nodeIds.length === 0) return out;
  const ids = nodeIds.map((id) => id.toLowerCase());
  const [rows, firsts] = await Promise.all([
    // Sessions open or ended inside the window (index node_sessions_ended, migration 021): not
    // every session of the node's history.
    db
      .selectFrom('node_sessions')
      .select(['node_id', 'started_at', 'last_seen_at', 'ended_at'])
      .where('node_id', 'in', ids)
      .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', window.from)]))
      .where('started_at', '<', window.to)
      .orderBy('started_at')
      .execute(),
    options.wholeWindow ? [] : firstSessions(db, ids),
  ]);
  const firstSeen = new Map(firsts.map((r) => [r.node_id, Number(toBigInt(r.first))]));
  const byNode = new Map<string, [number, number][]>();
  for (const r of rows) {
    const start = Math.max(Number(toBigInt(r.started_at)), window.from);
    const openEnd = isLive(r.node_id) ? window.to : Number(toBigInt(r.last_seen_at));
    const end = Math.min(r.ended_at === null ? openEnd : Number(toBigInt(r.ended_at)), window.to);
    if (end <= start) continue;
    const list = byNode.get(r.node_id) ?? [];
    list.push([start, end]);
    byNode.set(r.node_id, list);
  }
  for (const id of ids) {
    const since = options.wholeWindow ? window.from : Math.max(window.from, firstSeen.get(id) ?? window.to);
    const length = window.to - since;
    let covered = 0;
    let reach = window.from;
    for (const [start, end] of (byNode.get(id) ?? []).sort((a, b) => a[0] - b[0])) {
      const from = Math.max(start, reach);
      if (end > from) covered += end - from;
      reach = Math.max(reach, end);
    }
    out.set(id, length > 0 ? Math.min(1, covered / length) : 0);
  }
  return out;
}

/** Each node's first session start: one index probe per node (node_sessions_node), not its history. */
async function firstSessions(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<{ node_id: string; first: string | number | bigint }[]> {
  // A VALUES list (its column is column1 on both SQLite and PostgreSQL), each row one probe.
  const list = sql.join(ids.map((id) => sql`(${id})`));
  const result = await sql<{ node_id: string; first: string | number | bigint | null }>`
    select v.column1 as node_id,
      (select min(s.started_at) from node_sessions s where s.node_id = v.column1) as first
    from (values ${list}) as v`.execute(db);
  return result.rows.flatMap((r) => (r.first === null ? [] : [{ node_id: r.node_id, first: r.first }]));
}
