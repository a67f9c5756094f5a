/**
 * The sign-in message (design.md): a fixed first line, then one `Key: value` line per field.
 * The server keeps the exact text it issued and compares verbatim, so parsing only needs the nonce.
 */
export const SIGN_IN_STATEMENT = 'Sign this message to authenticate with gpumesh.';

export type SignInFields = {
  domain: string;
  /** Checksummed. */
  address: string;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAtMs: number;
  expiresAtMs: number;
};

/** Builds the text the wallet signs. */
export function buildSignInMessage(f: SignInFields): string {
  return [
    SIGN_IN_STATEMENT,
    '',
    `Domain: ${f.domain}`,
    `Address: ${f.address}`,
    `URI: ${f.uri}`,
    `Chain ID: ${f.chainId}`,
    `Nonce: ${f.nonce}`,
    `Issued At: ${new Date(f.issuedAtMs).toISOString()}`,
    `Expiration Time: ${new Date(f.expiresAtMs).toISOString()}`,
  ].join('\n');
}

/** The nonce named in a sign-in message, or null when there is none. */
export function parseSignInNonce(message: string): string | null {
  const match = /^Nonce: ([A-Za-z0-9]{8,128})$/m.exec(message);
  return match?.[1] ?? null;
}
