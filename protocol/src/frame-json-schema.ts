import { FRAME_SCHEMAS } from './messages.js';

/**
 * The JSON Schema (draft 2020-12 compatible) of every frame, keyed by type — what
 * protocol/schema/frames.schema.json holds for implementers in other languages. Built from the
 * same TypeBox schemas that type and validate frames here.
 */
export function frameJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://gpumesh.dev/schema/v0/frames.schema.json',
    title: 'gpumesh node protocol v0 frames',
    oneOf: Object.keys(FRAME_SCHEMAS).map((type) => ({ $ref: `#/$defs/${type}` })),
    $defs: JSON.parse(JSON.stringify(FRAME_SCHEMAS)),
  };
}
