import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { ApiError } from '../../errors.js';

/**
 * Addresses the image fetcher never reaches (unless allowed by name): private, loopback,
 * link-local, shared (CGNAT), unspecified, multicast, reserved and documentation ranges, IPv6
 * unique-local and link-local, IPv4 mapped into IPv6 (`::ffff:0:0/96`, in either notation: BlockList
 * checks it against the IPv4 ranges), and every IPv6 range that embeds an IPv4 address a stack may
 * route to it: IPv4-compatible (`::/96`, so `[::127.0.0.1]` is loopback) and NAT64 (`64:ff9b::/96`,
 * `64:ff9b:1::/48`), blocked whole.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Whether the fetcher may connect to `address` (an IP), given the configured exceptions. */
export function isPublicAddress(address: string, allow: readonly string[] = []): boolean {
  if (allow.includes(address)) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPublicAddress(mapped, allow);
  const family = isIP(address);
  if (family === 0) return false;
  return !BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export type FetchImageOptions = {
  maxBytes: number;
  timeoutMs: number;
  /** IPs allowed although private or loopback (config media.imageFetchAllowAddresses; tests). */
  allowAddresses: readonly string[];
};

/**
 * Fetches an http(s) image for a vision request — the coordinator does, so no provider machine
 * ever fetches a user's URL. SSRF guard: the host is resolved once, every address it resolves to
 * must be public (isPublicAddress), and the connection goes to that vetted address (no second
 * lookup a DNS-rebinding server could answer differently); redirects are refused, the body is cut
 * at `maxBytes` (413) and the whole fetch at `timeoutMs`.
 */
export async function fetchImage(url: string, options: FetchImageOptions): Promise<Buffer> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse('The image URL is not a valid URL.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw refuse('Image URLs must be http(s) or data: URLs.');
  if (parsed.username || parsed.password) throw refuse('Image URLs may not carry credentials.');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
  } catch {
    throw refuse(`The image host ${host.slice(0, 128)} could not be resolved.`);
  }
  if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address, options.allowAddresses)))
    throw refuse('The image URL points to a private, loopback or link-local address.');
  const target = addresses[0]!;
  const client = parsed.protocol === 'https:' ? https : http;
  return new Promise<Buffer>((resolve, reject) => {
    const request = client.get(
      parsed,
      {
        // Connect to the vetted address; TLS still checks the certificate against the host name.
        lookup: (_hostname, opts, callback) => {
          if ((opts as { all?: boolean }).all) callback(null, [target] as never);
          else callback(null, target.address, target.family);
        },
        headers: { accept: 'image/*', 'user-agent': 'gpumesh-image-fetch' },
        timeout: options.timeoutMs,
      },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return reject(
            refuse(`Fetching the image answered HTTP ${response.statusCode} (redirects are not followed).`),
          );
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            request.destroy();
            reject(new ApiError('payload_too_large', `The images exceed ${options.maxBytes} bytes.`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => resolve(Buffer.concat(chunks)));
        response.on('error', () => reject(refuse('Fetching the image failed.')));
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      reject(refuse(`Fetching the image took longer than ${options.timeoutMs} ms.`));
    }, options.timeoutMs);
    request.on('close', () => clearTimeout(timer));
    request.on('timeout', () => request.destroy());
    request.on('error', () => reject(refuse('Fetching the image failed.')));
  });
}

function refuse(message: string): ApiError {
  return new ApiError('invalid_request', message, { param: 'messages' });
}
