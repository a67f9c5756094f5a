import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { ApiError } from '../../errors.js';
import { EVIDENCE_PATH } from './evidence-hash.js';

/** How long a client may keep an evidence document: its content is fixed by its hash. */
const EVIDENCE_MAX_AGE_S = 365 * 24 * 60 * 60;

/**
 * GET /api/evidence/:hash (public): the evidence JSON of a conviction's slash (the model, its
 * sha256, each failed check's job ids and statistics, the verifiers), byte for byte as stored, so
 * that anyone can check its sha256 against the `evidenceHash` of the staking pool's Slashed event.
 * Unknown hash: 404; a malformed one: 400.
 */
export async function evidenceRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get(
    `${EVIDENCE_PATH}/:hash`,
    {
      schema: {
        summary: "A slash's evidence JSON, by the sha256 its Slashed event names",
        tags: ['trust'],
        params: Type.Object({ hash: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }) }),
      },
    },
    async (request, reply) => {
      const { hash } = request.params as { hash: string };
      const row = await ctx.db
        .selectFrom('slashes')
        .select('evidence')
        .where('evidence_hash', '=', hash.toLowerCase())
        .executeTakeFirst();
      if (!row) throw new ApiError('not_found', 'No slash has evidence with this hash.', { param: 'hash' });
      return reply
        .type('application/json; charset=utf-8')
        .header('cache-control', `public, max-age=${EVIDENCE_MAX_AGE_S}, immutable`)
        .send(row.evidence);
    },
  );
}
