/**
 * A Responses stream over the router's chat stream: a StreamSink (router/types.ts) that turns each
 * chat chunk into the typed events the SDKs parse — response.created and in_progress once a node
 * has the job, output_item.added and content_part.added before the first text,
 * output_text.delta per text, function_call_arguments.delta per tool-call fragment, the .done
 * events, then response.completed (or incomplete) with usage — after `keep` has stored the
 * response — or response.failed.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamSink } from '../../router/types.js';
import { hijackedStream } from '../hijacked-stream.js';
import {
  type Answer,
  type ChatUsage,
  callItem,
  itemId,
  messageItem,
  outputItemIds,
  outputOf,
  type ResponseMeta,
  responseObject,
} from './response-object.js';

type Delta = {
  content?: string | null;
  tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[];
};

export type ResponseStream = StreamSink & {
  readonly started: boolean;
  /** The finished response (completed or incomplete), once the stream ended well. */
  readonly response: Record<string, unknown> | undefined;
  /** What the model answered, once the stream ended well. */
  readonly answer: Answer | undefined;
  /** Settles once the last event is written (after `keep`, when the stream ended well). */
  readonly ended: Promise<void>;
};

export function responseEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  meta: ResponseMeta,
  keep?: (response: Record<string, unknown>, answer: Answer) => Promise<void>,
): ResponseStream {
  const stream = hijackedStream(request, reply);
  let sequence = 0;
  const emit = (type: string, data: Record<string, unknown>) => {
    if (stream.closed) return;
    const event = { type, sequence_number: sequence++, ...data };
    stream.raw.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  const answer: Answer = { text: '', calls: [], finish: 'stop', usage: undefined };
  const ids = outputItemIds(meta.id);
  /** Output indices: the message's (once opened) and each call's by its chat index. */
  let messageIndex: number | undefined;
  const callIndex = new Map<number, number>();
  let items = 0;
  let response: Record<string, unknown> | undefined;
  let finished = false;
  let ended: Promise<void> = Promise.resolve();

  const openMessage = () => {
    if (messageIndex !== undefined) return;
    messageIndex = items++;
    emit('response.output_item.added', {
      output_index: messageIndex,
      item: messageItem(ids.message, '', 'in_progress'),
    });
    emit('response.content_part.added', {
      item_id: ids.message,
      output_index: messageIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
  };
  const closeItems = () => {
    if (messageIndex !== undefined) {
      const part = { type: 'output_text', text: answer.text, annotations: [] };
      const at = { item_id: ids.message, output_index: messageIndex, content_index: 0 };
      emit('response.output_text.done', { ...at, text: answer.text });
      emit('response.content_part.done', { ...at, part });
      emit('response.output_item.done', {
        output_index: messageIndex,
        item: messageItem(ids.message, answer.text),
      });
    }
    answer.calls.forEach((call, i) => {
      const at = { item_id: ids.call(i), output_index: callIndex.get(i)! };
      emit('response.function_call_arguments.done', { ...at, arguments: call.arguments });
      emit('response.output_item.done', { output_index: at.output_index, item: callItem(at.item_id, call) });
    });
  };

  return {
    get started() {
      return stream.started;
    },
    get closed() {
      return stream.closed;
    },
    get response() {
      return response;
    },
    get answer() {
      return response ? answer : undefined;
    },
    get ended() {
      return ended;
    },
    onClose: stream.onClose,
    start(nodeId) {
      if (stream.started) return;
      stream.start({
        'content-type': 'text/event-stream; charset=utf-8',
        connection: 'keep-alive',
        'x-request-id': request.id,
        'x-gpumesh-node': nodeId,
      });
      const pending = responseObject(meta);
      emit('response.created', { response: pending });
      emit('response.in_progress', { response: pending });
    },
    write(chunk) {
      const choice = (chunk.choices as { delta?: Delta; finish_reason?: string | null }[] | undefined)?.[0];
      if (choice?.finish_reason) answer.finish = choice.finish_reason;
      const delta = choice?.delta;
      if (!delta) return;
      if (typeof delta.content === 'string' && delta.content !== '') {
        openMessage();
        answer.text += delta.content;
        emit('response.output_text.delta', {
          item_id: ids.message,
          output_index: messageIndex,
          content_index: 0,
          delta: delta.content,
        });
      }
      for (const part of delta.tool_calls ?? []) {
        const index = part.index ?? 0;
        let call = answer.calls[index];
        if (!call) {
          call = { callId: part.id ?? itemId('call'), name: part.function?.name ?? '', arguments: '' };
          answer.calls[index] = call;
          callIndex.set(index, items++);
          emit('response.output_item.added', {
            output_index: callIndex.get(index),
            item: callItem(ids.call(index), call, 'in_progress'),
          });
        }
        const fragment = part.function?.arguments ?? '';
        if (fragment === '') continue;
        call.arguments += fragment;
        emit('response.function_call_arguments.delta', {
          item_id: ids.call(index),
          output_index: callIndex.get(index),
          delta: fragment,
        });
      }
    },
    finish(final) {
      if (finished) return;
      finished = true;
      if (final && 'error' in final) {
        // An error before the first event is answered as plain HTTP by the caller.
        if (!stream.started) return;
        const failed = { ...responseObject(meta), status: 'failed', error: final.error };
        emit('response.failed', { response: failed });
      } else {
        if (!stream.started) this.start('');
        if (final?.usage) answer.usage = final.usage as ChatUsage;
        closeItems();
        const done = responseObject(meta, { answer, output: outputOf(answer, ids) });
        stream.finished = true;
        // Kept before the last event: a client that continues from it at once (an item_reference,
        // previous_response_id) finds it stored.
        ended = (keep ? keep(done, answer) : Promise.resolve()).then(() => {
          response = done;
          emit(done.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
          stream.raw.end();
        });
        return;
      }
      stream.finished = true;
      stream.raw.end();
    },
  };
}
