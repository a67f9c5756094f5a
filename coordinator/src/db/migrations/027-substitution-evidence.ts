import type { Kysely, Migration } from 'kysely';

/**
 * The substitution statistics (issue 40 point 7, trust/checks/substitution-ratio.ts): beside a
 * check's ln e-value, its ln q/p for each cheaper pinned quantization of the claimed weights the
 * coordinator's verifier holds; beside a node's running evidence, one CUSUM per such quantization.
 * Both JSON objects keyed by the catalog's quant name (values × 10,000); null where none was run.
 */
export const substitutionEvidence027: Migration & { name: string } = {
  name: '027-substitution-evidence',
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('verifications').addColumn('substitution_e4', 'text').execute();
    await db.schema.alterTable('node_trust').addColumn('substitution_e4', 'text').execute();
  },
};
