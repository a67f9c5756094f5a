/**
 * The provider API, for a node owner signed in with the wallet that owns the nodes (JWT):
 * `GET /api/provider/nodes` — each node the wallet owns (linked by its owner proof): live state,
 * tier, models with prices, jobs, tokens, failures and earnings today / 7 days / total;
 * `GET /api/provider/earnings?from&to&by=day|node|model` — earnings in USD grouped, and the
 * earnings account's balance (what a payout can send); `POST /api/provider/nodes/link` — link a
 * node with its operator's consent (the node key's signature of `nodeLinkText`), its earlier
 * earnings following; the coordinator attaches the owner to the node at its next connection.
 */
import { verifyOwnerProof } from '@gpumesh/protocol';
import { verifyNodeLink } from '@gpumesh/protocol/internal';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getAddress } from 'viem';
import type { AppContext } from '../app-context.js';
import { toBigInt } from '../db/bigint.js';
import { providerAccountId } from '../db/tables/ledger.js';
import { ApiError } from '../errors.js';
import type { Hub } from '../hub/hub.js';
import { uptimeOf } from '../hub/node-sessions.js';
import { nanoToUsd } from '../ledger/money.js';
import type { PickIndex } from '../router/pick-index.js';
import { slashesOf, trustSummaries, verificationHistory } from '../trust/standing/trust-views.js';
import { linkNode } from './link-node.js';
import { nodeFigures } from './node-figures.js';
import { NodeFigures, TrustSummary, Usd } from './node-figures-schema.js';
import { nodeMedians } from './node-medians.js';
import { readEarnings } from './read-earnings.js';

const DAY_MS = 86_400_000;
/** The widest window `GET /api/provider/earnings` sums over. */
const MAX_EARNINGS_WINDOW_MS = 366 * DAY_MS;

export async function providerRoutes(
  app: FastifyInstance,
  options: { ctx: AppContext; index: PickIndex; hub: Pick<Hub, 'session'> },
): Promise<void> {
  const { ctx, index, hub } = options;
  app.get(
    '/api/provider/nodes',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'The nodes your wallet owns: state, models, jobs, tokens, earnings (USD)',
        tags: ['provider'],
        security: [{ bearerJwt: [] }],
        response: {
          200: Type.Object({ owner: Type.String(), balance: Usd, nodes: Type.Array(NodeFigures) }),
        },
      },
    },
    async (request) => {
      const owner = request.user!.address.toLowerCase();
      const now = ctx.clock.now();
      const linked = await ctx.db
        .selectFrom('node_owners')
        .select(['node_id', 'linked_at'])
        .where('owner', '=', owner)
        .orderBy('linked_at')
        .execute();
      const ids = linked.map((row) => row.node_id);
      const figures = ids.length === 0 ? [] : await nodeFigures(ctx.db, ids, now);
      const isLive = (id: string) => findNode(index, id) !== undefined;
      const [day, week, medians, trust, histories, slashes] = await Promise.all([
        uptimeOf(ctx.db, ids, { from: now - DAY_MS, to: now }, isLive),
        uptimeOf(ctx.db, ids, { from: now - 7 * DAY_MS, to: now }, isLive),
        nodeMedians(ctx.db, ids, now - 7 * DAY_MS),
        trustSummaries(ctx.db, ids, now, isLive),
        Promise.all(ids.map((id) => verificationHistory(ctx.db, id))),
        Promise.all(ids.map((id) => slashesOf(ctx.db, id))),
      ]);
      const nodes = linked.map((row, i) => {
        const live = findNode(index, row.node_id);
        const f = figures.find((x) => x.node_id === row.node_id);
        return {
          nodeId: live?.nodeId ?? row.node_id,
          linkedAt: new Date(Number(row.linked_at)).toISOString(),
          live: live !== undefined,
          state: live?.state ?? null,
          tierRank: live?.tierRank ?? null,
          models: live
            ? [...live.entries.values()].map((e) => ({
                id: e.offer.modelId,
                family: e.offer.family,
                pricePerMTok: {
                  input: String(e.offer.priceIn),
                  output: String(e.offer.priceOut),
                  currency: e.offer.currency,
                },
              }))
            : [],
          jobs: Number(f?.jobs ?? 0),
          failedJobs: Number(f?.failed ?? 0),
          tokens: { prompt: Number(f?.prompt ?? 0), completion: Number(f?.completion ?? 0) },
          earnings: {
            today: nanoToUsd(toBigInt(f?.today ?? 0)),
            last7Days: nanoToUsd(toBigInt(f?.week ?? 0)),
            total: nanoToUsd(toBigInt(f?.total ?? 0)),
          },
          uptime: {
            last24h: round4(day.get(row.node_id) ?? 0),
            last7Days: round4(week.get(row.node_id) ?? 0),
          },
          medians: medians.get(row.node_id) ?? { ttftMs: null, tokensPerSecond: null },
          trust: trust.get(row.node_id.toLowerCase())!,
          verifications: histories[i]!,
          slashes: slashes[i]!,
        };
      });
      return {
        owner,
        balance: nanoToUsd((await ctx.ledger.balance(providerAccountId(owner))).balanceNano),
        nodes,
      };
    },
  );

  app.get<{ Params: { nodeId: string } }>(
    '/api/network/nodes/:nodeId',
    {
      schema: {
        summary: 'One node’s public figures: live state, jobs, uptime and what it earned in total (USD)',
        description:
          'Public, like the /network page: a node operator’s `gpumesh-node status` reads its total here. Earnings are what settlements credited for its jobs (to its owner once linked).',
        tags: ['network'],
        params: Type.Object({ nodeId: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }) }),
        response: {
          200: Type.Object({
            nodeId: Type.String(),
            live: Type.Boolean(),
            state: Type.Union([Type.String(), Type.Null()]),
            linked: Type.Boolean({ description: 'linked to an owner wallet' }),
            jobs: Type.Integer(),
            earnings: Type.Object({ total: Usd, today: Usd, unit: Type.Literal('USD') }),
            uptime: Type.Object({ last24h: Type.Number() }),
            trust: TrustSummary,
          }),
        },
      },
    },
    async (request) => {
      const id = request.params.nodeId.toLowerCase();
      const now = ctx.clock.now();
      const live = findNode(index, id);
      const [figures, uptime, owner, trust] = await Promise.all([
        nodeFigures(ctx.db, [id], now),
        uptimeOf(ctx.db, [id], { from: now - DAY_MS, to: now }, () => live !== undefined),
        ctx.db.selectFrom('node_owners').select('owner').where('node_id', '=', id).executeTakeFirst(),
        trustSummaries(ctx.db, [id], now, () => live !== undefined),
      ]);
      const f = figures[0];
      return {
        nodeId: live?.nodeId ?? id,
        live: live !== undefined,
        state: live?.state ?? null,
        linked: owner !== undefined,
        jobs: Number(f?.jobs ?? 0),
        earnings: {
          total: nanoToUsd(toBigInt(f?.total ?? 0)),
          today: nanoToUsd(toBigInt(f?.today ?? 0)),
          unit: 'USD' as const,
        },
        uptime: { last24h: round4(uptime.get(id) ?? 0) },
        trust: trust.get(id)!,
      };
    },
  );

  app.post<{ Body: { nodeId: string; nodeSignature: string; ownerSignature?: string } }>(
    '/api/provider/nodes/link',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Link a node to your wallet (the node key signs `gpumesh-node link --owner <you>`)',
        tags: ['provider'],
        security: [{ bearerJwt: [] }],
        body: Type.Object(
          {
            nodeId: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
            nodeSignature: Type.String({ pattern: '^0x[0-9a-fA-F]{130}$' }),
            ownerSignature: Type.Optional(
              Type.String({
                pattern: '^0x[0-9a-fA-F]{130}$',
                description:
                  'The wallet’s signature of the owner-proof text (`gpumesh-node id`); checked when given',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ nodeId: Type.String(), owner: Type.String(), movedEarnings: Usd }),
        },
      },
    },
    async (request) => {
      const owner = request.user!.address.toLowerCase();
      const { nodeId, nodeSignature } = request.body;
      // The owner's session is the owner's consent; the node key's signature of this owner, the
      // node operator's. Either alone could claim someone else's node.
      if (!(await verifyNodeLink(nodeId, owner, nodeSignature))) {
        throw new ApiError(
          'invalid_request',
          'nodeSignature is not the node key’s signature of the link text for this wallet (gpumesh-node link --owner <your address>).',
          { param: 'nodeSignature' },
        );
      }
      if (
        request.body.ownerSignature !== undefined &&
        !(await verifyOwnerProof(nodeId, { address: owner, signature: request.body.ownerSignature }))
      ) {
        throw new ApiError(
          'invalid_request',
          'ownerSignature is not your wallet’s signature of this node’s owner-proof text.',
          {
            param: 'ownerSignature',
          },
        );
      }
      const { movedNano } = await linkNode(ctx.store, { nodeId, owner, now: ctx.clock.now() });
      // Connected here: its next jobs credit the owner at once (elsewhere: at its next connection).
      for (const id of new Set([nodeId, nodeId.toLowerCase(), getAddress(nodeId)]))
        hub.session(id)?.adoptOwner(owner);
      return { nodeId: nodeId.toLowerCase(), owner, movedEarnings: nanoToUsd(movedNano) };
    },
  );

  app.get<{ Querystring: { from?: string; to?: string; by?: 'day' | 'node' | 'model' } }>(
    '/api/provider/earnings',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Your nodes’ earnings (USD) by day, node or model, and the balance a payout can send',
        tags: ['provider'],
        security: [{ bearerJwt: [] }],
        querystring: Type.Object(
          {
            from: Type.Optional(Type.String({ format: 'date-time', description: 'default: 30 days ago' })),
            to: Type.Optional(Type.String({ format: 'date-time', description: 'default: now' })),
            by: Type.Optional(Type.String({ enum: ['day', 'node', 'model'], description: 'default: day' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            owner: Type.String(),
            balance: Usd,
            by: Type.String(),
            rows: Type.Array(Type.Object({ key: Type.String(), jobs: Type.Integer(), earnings: Usd })),
          }),
        },
      },
    },
    async (request) => {
      const owner = request.user!.address.toLowerCase();
      const now = ctx.clock.now();
      const to = request.query.to ? Date.parse(request.query.to) : now;
      const from = request.query.from ? Date.parse(request.query.from) : to - 30 * DAY_MS;
      if (!(from <= to) || to - from > MAX_EARNINGS_WINDOW_MS) {
        throw new ApiError('invalid_request', 'from must be before to, at most 366 days apart.', {
          param: 'from',
        });
      }
      const by = request.query.by ?? 'day';
      const rows = await readEarnings(ctx.db, { owner, from, to, by });
      return {
        owner,
        balance: nanoToUsd((await ctx.ledger.balance(providerAccountId(owner))).balanceNano),
        by,
        rows: rows.map((r) => ({ key: r.key, jobs: r.jobs, earnings: nanoToUsd(r.earnedNano) })),
      };
    },
  );
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** The index's node for a (lowercase) id, whatever its case there. */
function findNode(index: PickIndex, id: string) {
  for (const node of index.nodes()) if (node.nodeId.toLowerCase() === id) return node;
  return undefined;
}
