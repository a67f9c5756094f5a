/**
 * POST /v1/responses (OpenAI's Responses API) on the chat path: the request becomes a chat
 * completion (to-chat.ts) routed, billed and refused exactly as /v1/chat/completions is; the
 * answer comes back as a Response object or as its typed events (response-events.ts). With
 * `store` (the default) the response is kept for GET /v1/responses/{id}, DELETE, and
 * `previous_response_id` — unless `provider.zdr` asks that nothing be kept.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { ApiError } from '../../errors.js';
import { routeRequest } from '../../router/route-request.js';
import type { RouteDeps } from '../../router/types.js';
import { dropNullFields } from '../drop-null-fields.js';
import type { JobFor } from '../job-for.js';
import { watchClient } from '../watch-client.js';
import { checkResponsesSchemas } from './check-schemas.js';
import { inputItemsOf, type ListedInputItem } from './input-items.js';
import { resolveReferences } from './resolve-references.js';
import { responseEvents } from './response-events.js';
import {
  type Answer,
  answerMessages,
  answerOf,
  itemId,
  outputItemIds,
  outputOf,
  responseObject,
} from './response-object.js';
import { deleteResponse, loadInputItems, loadResponse, saveResponse } from './response-store.js';
import { ResponsesBody } from './schemas.js';
import { type ChatMessage, inputMessages, toChat } from './to-chat.js';

export type ResponsesRoutesOptions = {
  ctx: AppContext;
  deps: RouteDeps;
  apiKey: onRequestHookHandler;
  jobFor: JobFor;
};

const API_KEY = [{ apiKey: [] }];
/** OpenAI's paging of input items: `limit` 1–100 (default 20), `order` asc or desc (default), `after` an item id. */
const InputItemsQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^(100|[1-9][0-9]?)$' })),
    order: Type.Optional(Type.String({ pattern: '^(asc|desc)$' })),
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);
const ResponseId = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128 }) },
  { additionalProperties: false },
);

export async function responsesRoutes(app: FastifyInstance, options: ResponsesRoutesOptions): Promise<void> {
  const { ctx, deps, apiKey, jobFor } = options;
  const { db } = ctx;

  /** Keeps the response and its conversation; a failure is logged (the client has its answer). */
  const store = async (
    request: FastifyRequest,
    response: Record<string, unknown>,
    conversation: ChatMessage[],
    answer: Answer,
    inputItems: ListedInputItem[],
  ) => {
    try {
      await saveResponse(db, {
        id: response.id as string,
        userId: request.apiKey!.userId,
        now: ctx.clock.now(),
        response,
        inputItems,
        conversation: [...conversation, ...(answerMessages(answer) as ChatMessage[])],
      });
    } catch (error) {
      request.log.error({ err: error, responseId: response.id }, 'the response could not be stored');
    }
  };

  const create = async (request: FastifyRequest, reply: FastifyReply) => {
    const startedAt = performance.now();
    const body = withZdr(request.body as ResponsesBody);
    checkResponsesSchemas(body);
    const userId = request.apiKey!.userId;
    const history = body.previous_response_id
      ? (await loadResponse(db, userId, body.previous_response_id, 'previous_response_id')).conversation
      : [];
    const input = await resolveReferences(db, userId, body.input);
    const job = jobFor('chat', request, toChat({ ...body, input }, history), body.model, startedAt);
    const now = () => ctx.clock.now();
    const meta = { id: itemId('resp'), createdAt: Math.floor(now() / 1000), body, now };
    const conversation = [...history, ...inputMessages(input)];
    const inputItems = inputItemsOf(input, meta.id);
    if (!body.stream) {
      const client = watchClient(request, reply);
      const result = await routeRequest(deps, { ...job, ...(client ? { client } : {}) });
      reply.header('x-gpumesh-node', result.nodeId);
      const answer = answerOf(result.response);
      const response = responseObject(meta, {
        answer,
        output: outputOf(answer, outputItemIds(meta.id)),
      });
      if (body.store !== false) await store(request, response, conversation, answer, inputItems);
      return response;
    }
    const keep =
      body.store !== false
        ? (response: Record<string, unknown>, answer: Answer) =>
            store(request, response, conversation, answer, inputItems)
        : undefined;
    const sink = responseEvents(request, reply, meta, keep);
    try {
      await routeRequest(deps, job, sink);
    } catch (error) {
      if (!sink.started) throw error; // nothing sent yet: a plain HTTP error
      const apiError = error instanceof ApiError ? error : new ApiError('internal_error');
      if (!sink.closed) sink.finish({ error: apiError.toBody().error });
      return reply;
    }
    await sink.ended;
    return reply;
  };

  app.post(
    '/v1/responses',
    {
      bodyLimit: ctx.config.bodyLimitBytes,
      preValidation: dropNullFields,
      onRequest: apiKey,
      schema: { tags: ['v1'], security: API_KEY, operationId: 'createResponse', body: ResponsesBody },
    },
    create,
  );
  app.get(
    '/v1/responses/:id',
    {
      onRequest: apiKey,
      schema: { tags: ['v1'], security: API_KEY, operationId: 'getResponse', params: ResponseId },
    },
    async (request) =>
      (await loadResponse(db, request.apiKey!.userId, (request.params as { id: string }).id)).response,
  );
  // OpenAI's list of a response's input items: newest first unless `order=asc`, paged by `after`.
  app.get(
    '/v1/responses/:id/input_items',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'listInputItems',
        params: ResponseId,
        querystring: InputItemsQuery,
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const query = request.query as Static<typeof InputItemsQuery>;
      const stored = await loadInputItems(db, request.apiKey!.userId, id);
      const items = stored ?? [];
      const ordered = query.order === 'asc' ? items : [...items].reverse();
      const start = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
      if (query.after !== undefined && start === 0)
        throw new ApiError('invalid_request', `No input item "${query.after}" in this response.`, {
          param: 'after',
        });
      const limit = Number(query.limit ?? 20);
      const data = ordered.slice(start, start + limit);
      return {
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: start + data.length < ordered.length,
      };
    },
  );
  app.delete(
    '/v1/responses/:id',
    {
      onRequest: apiKey,
      schema: { tags: ['v1'], security: API_KEY, operationId: 'deleteResponse', params: ResponseId },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      await deleteResponse(db, request.apiKey!.userId, id);
      return { id, object: 'response', deleted: true };
    },
  );
}

/**
 * OpenRouter's `provider.zdr: true` keeps nothing: the response is not stored (`store` defaults to
 * false, and the Response says so); `store: true` beside it asks for both, a 400 naming `store`.
 */
function withZdr(body: ResponsesBody): ResponsesBody {
  if (body.provider?.zdr !== true) return body;
  if (body.store === true)
    throw new ApiError(
      'invalid_request',
      'store: true keeps the response; provider.zdr: true keeps nothing.',
      {
        param: 'store',
      },
    );
  return { ...body, store: false };
}
