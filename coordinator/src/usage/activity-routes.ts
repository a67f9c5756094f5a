/**
 * The signed-in user's activity log: `GET /api/router/activity` (a page of requests, newest first,
 * with a cursor to the next) and `GET /api/router/activity.csv` (the same requests as a download).
 */
import { Readable } from 'node:stream';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { decodeActivityCursor, encodeActivityCursor } from './activity-cursor.js';
import { exportActivityCsv } from './export-activity-csv.js';
import { isDay } from './is-day.js';
import { type ActivityFilters, listActivity } from './list-activity.js';

/** Rows of a page when the client names no limit. */
export const DEFAULT_ACTIVITY_LIMIT = 50;
/** Most rows one page holds. */
export const MAX_ACTIVITY_LIMIT = 500;

const BEARER_JWT = [{ bearerJwt: [] }];
const DAY_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

// Query strings declare strings only (app.test.ts): numbers and dates are checked below.
const FilterFields = {
  from: Type.Optional(Type.String({ pattern: DAY_PATTERN, description: 'First UTC day, YYYY-MM-DD' })),
  to: Type.Optional(Type.String({ pattern: DAY_PATTERN, description: 'Last UTC day, YYYY-MM-DD' })),
  // No control characters: PostgreSQL refuses a NUL in text (a 500 if it reached the query).
  model: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f\\u007f]+$',
      description: 'Only this model',
    }),
  ),
  key: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$', description: 'Only this key id' }),
  ),
};
const ActivityQuery = Type.Object(
  {
    ...FilterFields,
    limit: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,6}$', description: `Rows, 1 to ${MAX_ACTIVITY_LIMIT}` }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "The previous page's nextCursor" }),
    ),
  },
  { additionalProperties: false },
);
const ActivityCsvQuery = Type.Object(FilterFields, { additionalProperties: false });

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const ActivityRowSchema = Type.Object({
  id: Type.String({ description: 'The request id, also the generation id' }),
  time: Type.String({ description: 'ISO 8601, UTC' }),
  model: Type.String(),
  nodeId: Type.String(),
  keyId: Nullable(Type.String()),
  keyName: Nullable(Type.String()),
  kind: Type.String({ description: 'chat | completion | embedding' }),
  promptTokens: Type.Integer(),
  completionTokens: Type.Integer(),
  totalTokens: Type.Integer(),
  cost: Type.Number({ description: 'USD' }),
  costNano: Type.String({ description: 'The cost in nanousd, exact' }),
  latencyMs: Nullable(Type.Number()),
  tokensPerSecond: Nullable(Type.Number()),
  finishReason: Nullable(Type.String()),
  status: Type.String({ description: 'completed | client_disconnected | node_failed' }),
});
const ActivityResponse = Type.Object({
  data: Type.Array(ActivityRowSchema),
  nextCursor: Nullable(Type.String({ description: 'Pass as cursor for the next page; null on the last' })),
});

export async function activityRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const today = () => new Date(ctx.clock.now()).toISOString().slice(0, 10);

  app.get(
    '/api/router/activity',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['router'],
        operationId: 'listActivity',
        security: BEARER_JWT,
        summary: 'Your requests, newest first: model, node, key, tokens, cost, latency (cursor pages)',
        querystring: ActivityQuery,
        response: { 200: ActivityResponse },
      },
    },
    async (request, reply) => {
      const q = request.query as Static<typeof ActivityQuery>;
      const limit = q.limit === undefined ? DEFAULT_ACTIVITY_LIMIT : Number(q.limit);
      if (limit < 1 || limit > MAX_ACTIVITY_LIMIT) {
        throw new ApiError('invalid_request', `limit must be from 1 to ${MAX_ACTIVITY_LIMIT}.`, {
          param: 'limit',
        });
      }
      const after = q.cursor === undefined ? undefined : decodeActivityCursor(q.cursor);
      if (after === null) {
        throw new ApiError('invalid_request', 'cursor is not a nextCursor of this API.', { param: 'cursor' });
      }
      const page = await listActivity(ctx, {
        userId: request.user!.id,
        filters: toFilters(q),
        limit,
        after,
      });
      reply.header('cache-control', 'no-store');
      return { data: page.data, nextCursor: page.next ? encodeActivityCursor(page.next) : null };
    },
  );

  app.get(
    '/api/router/activity.csv',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['router'],
        operationId: 'exportActivityCsv',
        security: BEARER_JWT,
        summary: 'Your requests as CSV (newest first, up to 100,000 rows), same filters as /activity',
        querystring: ActivityCsvQuery,
      },
    },
    async (request, reply) => {
      const q = request.query as Static<typeof ActivityCsvQuery>;
      const filters = toFilters(q);
      const csv = await exportActivityCsv(ctx, { userId: request.user!.id, filters });
      const filename = `gpumesh-activity-${filters.from ?? 'start'}-${filters.to ?? today()}.csv`;
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .header('cache-control', 'no-store')
        .header('x-gpumesh-truncated', String(csv.truncated))
        .send(Readable.from(csv.chunks));
    },
  );
}

/** The query's filters, its days checked as real dates in order (400 naming the field otherwise). */
function toFilters(q: { from?: string; to?: string; model?: string; key?: string }): ActivityFilters {
  for (const param of ['from', 'to'] as const) {
    const day = q[param];
    if (day !== undefined && !isDay(day)) {
      throw new ApiError('invalid_request', `${param} must be a date, YYYY-MM-DD.`, { param });
    }
  }
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) {
    throw new ApiError('invalid_request', 'from must not be after to.', { param: 'from' });
  }
  return { from: q.from, to: q.to, model: q.model, keyId: q.key };
}
