/** The model a request names, as the live nodes serve it, and the one answer when none does. */
import type { JobKind } from '@gpumesh/protocol';
import { ApiError } from '../errors.js';
import { isVoiceKind } from '../pricing/media-units.js';
import type { Entry, PickIndex } from './pick-index.js';

/** Families a job kind may run on. */
const FAMILIES_FOR_KIND: Record<JobKind, readonly string[]> = {
  chat: ['chat', 'vision'],
  completion: ['chat', 'text'],
  embedding: ['embedding'],
  verify: ['chat', 'text'],
  vision: ['vision'],
  transcription: ['voice'],
  translation: ['voice'],
  speech: ['voice'],
};

/** Whether `entry` takes jobs of `kind`: a voice offer only the voice kinds it names and prices. */
export function servesKind(entry: Entry, kind: JobKind): boolean {
  return !isVoiceKind(kind) || (entry.offer.kinds?.includes(kind) ?? false);
}

/**
 * The one answer for a model no live node serves: 404 for a model no node has offered, 503 with
 * Retry-After for one whose nodes are all gone for now (an outage; clients retry).
 */
export function modelNotFound(index: PickIndex, model: string): ApiError {
  if (index.wasOffered(model)) {
    return new ApiError(
      'no_provider_available',
      `No node serving "${model}" is connected now; retry shortly.`,
      {
        param: 'model',
        retryAfterS: OUTAGE_RETRY_AFTER_S,
      },
    );
  }
  return new ApiError('model_not_found', `No live node serves the model "${model}".`, { param: 'model' });
}

/** Retry-After of a model whose nodes are all gone: about a node's reconnect time. */
export const OUTAGE_RETRY_AFTER_S = 5;

/**
 * The model a request names, as the live nodes serve it: its longest context. 404 when no live
 * node serves it, 400 when it is of a family the request's kind can't run on (an embedding model
 * asked to chat).
 */
export function findModel(index: PickIndex, model: string, kind: JobKind): { contextLength: number } {
  const offers = index.offers(model);
  if (!offers || offers.size === 0) throw modelNotFound(index, model);
  const first = offers.values().next().value!;
  if (!FAMILIES_FOR_KIND[kind].includes(first.offer.family)) {
    // A chat with images on a text-only chat model: say what is missing, not what the model is.
    const message =
      kind === 'vision'
        ? `The model "${model}" does not take images (it is a ${first.offer.family} model); send text only, or use a vision model.`
        : `The model "${model}" is a ${first.offer.family} model.`;
    throw new ApiError('invalid_request', message, { param: kind === 'vision' ? 'messages' : 'model' });
  }
  // Only voice offers differ in the kinds they serve; no walk of every offer for the others.
  if (isVoiceKind(kind) && !someServes(offers.values(), kind)) {
    throw new ApiError('invalid_request', `The model "${model}" does not do ${kind}.`, { param: 'model' });
  }
  return { contextLength: index.maxContextLength(model) };
}

function someServes(entries: Iterable<Entry>, kind: JobKind): boolean {
  for (const entry of entries) if (servesKind(entry, kind)) return true;
  return false;
}
