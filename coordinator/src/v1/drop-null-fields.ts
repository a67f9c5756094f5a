import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * preValidation hook of the /v1 body routes: a top-level field sent as JSON `null` is removed, as
 * OpenAI reads `null` on an optional field as "not given" (its default: temperature 1, no stop, no
 * limit). Without this, a null could reach the node as a value of its own (a runtime might read
 * `temperature: null` as 0, greedy) or fail there. Required fields sent as null then fail
 * validation as missing, naming the field. Nested nulls keep their meaning (an assistant message's
 * `content: null`).
 */
export async function dropNullFields(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) if (record[key] === null) delete record[key];
}
