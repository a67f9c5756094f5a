/** /api/router/usage (session JWT): the account's usage totals and breakdowns by model, key and day. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { isDay } from '../usage/is-day.js';
import { summarizeUsage } from '../usage/summarize-usage.js';
import { UsageQuery } from './schemas.js';

const BEARER_JWT = [{ bearerJwt: [] }];

/** Longest usage window one summary covers. */
export const MAX_USAGE_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

export async function usageRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get(
    '/api/router/usage',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['router'],
        security: BEARER_JWT,
        summary: 'Usage totals and breakdowns by model, key and day',
        querystring: UsageQuery,
      },
    },
    async (request) => {
      const q = request.query as UsageQuery;
      // The schema checks the shape only: 2026-13-45 would reach Date and make NaN (a 500).
      for (const param of ['from', 'to'] as const) {
        const day = q[param];
        if (day !== undefined && !isDay(day))
          throw new ApiError('invalid_request', `${param} must be a date, YYYY-MM-DD.`, { param });
      }
      const today = new Date(ctx.clock.now()).toISOString().slice(0, 10);
      const to = q.to ?? today;
      const from = q.from ?? new Date(Date.parse(to) - 29 * DAY_MS).toISOString().slice(0, 10);
      const span = (Date.parse(to) - Date.parse(from)) / DAY_MS;
      if (!Number.isFinite(span) || span < 0)
        throw new ApiError('invalid_request', 'from must not be after to.', { param: 'from' });
      if (span >= MAX_USAGE_RANGE_DAYS) {
        throw new ApiError('invalid_request', `The range may span at most ${MAX_USAGE_RANGE_DAYS} days.`, {
          param: 'from',
        });
      }
      return summarizeUsage(ctx, { userId: request.user!.id, from, to });
    },
  );
}
