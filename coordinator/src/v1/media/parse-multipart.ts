import { ApiError } from '../../errors.js';

/** One part of a multipart/form-data body: a field's text, or a file's bytes. */
export type MultipartPart = { name: string; filename?: string; contentType?: string; data: Buffer };

/** Most parts one body may hold (OpenAI's audio endpoints take a handful of fields). */
export const MAX_MULTIPART_PARTS = 32;

/**
 * Parses a multipart/form-data body (RFC 7578) held in memory — fastify's body limit already
 * bounded it. Anything malformed is a 400 naming what is wrong, never a crash.
 */
export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = /boundary=(?:"([^"]{1,70})"|([^;\s]{1,70}))/i.exec(contentType);
  const value = boundary?.[1] ?? boundary?.[2];
  if (!value) throw new ApiError('invalid_request', 'The multipart body has no boundary.');
  const delimiter = Buffer.from(`--${value}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw new ApiError('invalid_request', 'The multipart body is malformed.');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') return parts;
    if (body.subarray(at, at + 2).toString() !== '\r\n')
      throw new ApiError('invalid_request', 'The multipart body is malformed.');
    at += 2;
    const headerEnd = body.indexOf('\r\n\r\n', at);
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), at);
    if (headerEnd < 0 || next < 0 || headerEnd > next)
      throw new ApiError('invalid_request', 'The multipart body is malformed.');
    const headers = body.subarray(at, headerEnd).toString('utf8');
    const disposition = /^content-disposition:\s*form-data(.*)$/im.exec(headers)?.[1] ?? '';
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw new ApiError('invalid_request', 'A multipart part has no name.');
    const filename = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1];
    const partType = /^content-type:\s*([^\r\n;]+)/im.exec(headers)?.[1]?.trim();
    parts.push({
      name,
      ...(filename !== undefined ? { filename } : {}),
      ...(partType ? { contentType: partType } : {}),
      data: body.subarray(headerEnd + 4, next),
    });
    if (parts.length > MAX_MULTIPART_PARTS)
      throw new ApiError(
        'invalid_request',
        `A multipart body may hold at most ${MAX_MULTIPART_PARTS} parts.`,
      );
    at = next + 2;
  }
}
