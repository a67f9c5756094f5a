import type { FastifyInstance } from 'fastify';
import { vi } from 'vitest';
import type { JobHandlers, JobSpec } from '../../coordinator/src/router/jobs.js';
import type { Slot } from '../../coordinator/src/router/router.js';

/** What a job sent to a node looked like, and the text (and token ids) its chunks carried. */
export type SentJob = {
  nodeId: string;
  continueFrom: string | undefined;
  /** The continueFrom's token ids (v0.4), if it carried them. */
  continueFromIds: readonly number[] | undefined;
  text: string;
  ids: number[];
};

/**
 * Records every job `app`'s router sends to a node, as it sends it (a spy on router.dispatch): its
 * node (lowercase), its continueFrom text and its chunks' text so far. Empty the array to start over.
 */
export function recordSentJobs(app: FastifyInstance): SentJob[] {
  const sent: SentJob[] = [];
  const dispatch = app.router.dispatch.bind(app.router);
  vi.spyOn(app.router, 'dispatch').mockImplementation((slot: Slot, spec: JobSpec, handlers: JobHandlers) => {
    const job: SentJob = {
      nodeId: slot.entry.node.nodeId.toLowerCase(),
      continueFrom: spec.continueFrom?.text,
      continueFromIds: spec.continueFrom?.tokenIds,
      text: '',
      ids: [],
    };
    sent.push(job);
    return dispatch(slot, spec, {
      ...handlers,
      onChunk: (chunk, seq, tokens, tokenIds) => {
        const choice = (chunk.choices as { delta?: { content?: string }; text?: string }[] | undefined)?.[0];
        job.text += choice?.delta?.content ?? choice?.text ?? '';
        job.ids.push(...(tokenIds ?? []));
        handlers.onChunk?.(chunk, seq, tokens, tokenIds);
      },
    });
  });
  return sent;
}
