/**
 * The activity log's page cursor: the position of the last row a page showed, (created_at, id), the
 * log's order. Opaque to clients (base64url), so its layout can change; strict on the way in, so a
 * cursor that was not ours is a 400, never a query on a half-parsed value.
 */
export type ActivityCursor = { readonly createdAt: number; readonly id: string };

const DECODED = /^([0-9]{1,16})\.([A-Za-z0-9_-]{1,128})$/;

/** The cursor after `row` (the next page starts below it). */
export function encodeActivityCursor(row: ActivityCursor): string {
  return Buffer.from(`${row.createdAt}.${row.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or null when `cursor` is not one encodeActivityCursor wrote. */
export function decodeActivityCursor(cursor: string): ActivityCursor | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const match = DECODED.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return null;
  const createdAt = Number(match[1]);
  if (!Number.isSafeInteger(createdAt)) return null;
  const position = { createdAt, id: match[2]! };
  // One spelling per position: anything base64url-decodes to something, so compare the round trip.
  return encodeActivityCursor(position) === cursor ? position : null;
}
