import { imageTokensBound } from '@gpumesh/protocol';
import { ApiError } from '../../errors.js';
import { estimatePromptTokens } from '../estimate-prompt-tokens.js';
import { type FetchImageOptions, fetchImage } from './fetch-image.js';
import { imageFacts } from './image-facts.js';

type Part = { type?: unknown; image_url?: unknown };
type Message = Record<string, unknown> & { content?: unknown };

/** Whether a chat body holds an image part (then it is a `vision` job). */
export function hasImageParts(body: Record<string, unknown>): boolean {
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  return messages.some(
    (m) => Array.isArray(m.content) && (m.content as Part[]).some((p) => p?.type === 'image_url'),
  );
}

/**
 * UTF-8 bytes of a chat body's image URLs: the chat route lets its body grow by the media limit for
 * images only, so a body is measured without them against the ordinary body limit.
 */
export function imageUrlBytes(body: Record<string, unknown>): number {
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  let bytes = 0;
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const part of m.content as Part[]) {
      if (part?.type !== 'image_url') continue;
      const ref = part.image_url as { url?: unknown } | string | undefined;
      const url = typeof ref === 'string' ? ref : ref?.url;
      if (typeof url === 'string') bytes += Buffer.byteLength(url, 'utf8');
    }
  }
  return bytes;
}

export type ResolveImagesOptions = FetchImageOptions & { maxImages: number };

/**
 * A vision request made ready for a node: every image part's URL becomes a `data:` URL of the
 * image's bytes — data URLs checked, http(s) URLs fetched here behind the SSRF guard
 * (fetch-image.ts) — each a PNG, JPEG, GIF or WebP whose size is read from its header. Returns the
 * new messages and the prompt bound: the chat bound of everything but the images, plus each
 * image's token bound (NODE_PROTOCOL.md §9 "Units and prices"). Over `maxImages` is 400; over
 * `maxBytes` of images together, 413.
 */
export async function resolveImages(
  messages: readonly Message[],
  options: ResolveImagesOptions,
): Promise<{ messages: Message[]; promptTokensBound: number }> {
  let images = 0;
  let bytes = 0;
  let imageTokens = 0;
  const withoutImages: Message[] = [];
  const resolved: Message[] = [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) {
      resolved.push(message);
      withoutImages.push(message);
      continue;
    }
    const parts: unknown[] = [];
    const textParts: unknown[] = [];
    for (const part of message.content as Part[]) {
      if (part?.type !== 'image_url') {
        parts.push(part);
        textParts.push(part);
        continue;
      }
      images++;
      if (images > options.maxImages)
        throw new ApiError('invalid_request', `A request may carry at most ${options.maxImages} images.`, {
          param: 'messages',
        });
      const ref = part.image_url as { url?: unknown } | string | undefined;
      const url = typeof ref === 'string' ? ref : ref?.url;
      if (typeof url !== 'string' || url.length === 0)
        throw new ApiError('invalid_request', 'An image_url part needs image_url.url.', {
          param: 'messages',
        });
      const data = url.startsWith('data:')
        ? decodeDataUrl(url)
        : await fetchImage(url, { ...options, maxBytes: options.maxBytes - bytes });
      bytes += data.length;
      if (bytes > options.maxBytes)
        throw new ApiError('payload_too_large', `The images exceed ${options.maxBytes} bytes.`, {
          param: 'messages',
        });
      const facts = imageFacts(data);
      if (!facts)
        throw new ApiError('invalid_request', 'Images must be PNG, JPEG, GIF or WebP.', {
          param: 'messages',
        });
      imageTokens += imageTokensBound(facts.width, facts.height);
      const detail =
        typeof ref === 'object' && ref !== null ? (ref as { detail?: unknown }).detail : undefined;
      parts.push({
        type: 'image_url',
        image_url: {
          url: `data:${facts.mimeType};base64,${data.toString('base64')}`,
          ...(typeof detail === 'string' ? { detail } : {}),
        },
      });
    }
    resolved.push({ ...message, content: parts });
    withoutImages.push({ ...message, content: textParts });
  }
  return {
    messages: resolved,
    promptTokensBound: estimatePromptTokens('chat', { messages: withoutImages }) + imageTokens,
  };
}

/** The bytes of a base64 `data:` URL; 400 for anything else. */
function decodeDataUrl(url: string): Buffer {
  const match = /^data:([a-z0-9.+/-]{1,64})?(;[a-z0-9=.+-]{1,64})*;base64,([A-Za-z0-9+/]*={0,2})$/i.exec(url);
  if (!match)
    throw new ApiError('invalid_request', 'Image data URLs must be base64 (data:image/…;base64,…).', {
      param: 'messages',
    });
  return Buffer.from(match[3]!, 'base64');
}
