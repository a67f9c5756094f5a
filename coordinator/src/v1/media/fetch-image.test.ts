import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { fetchImage, isPublicAddress } from './fetch-image.js';

describe('isPublicAddress', () => {
  test('default: public addresses pass; private, loopback, link-local, mapped and reserved do not', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(isPublicAddress(ip)).toBe(true);
    for (const ip of [
      '127.0.0.1',
      '127.9.9.9',
      '10.0.0.1',
      '172.16.5.5',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      // Mapped, in the hex notation URL parsing gives ([::ffff:127.0.0.1] → ::ffff:7f00:1).
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      // IPv4-compatible (::/96): [::127.0.0.1] is ::7f00:1.
      '::127.0.0.1',
      '::7f00:1',
      '::a00:1',
      // NAT64: the well-known prefix and the local-use one.
      '64:ff9b::a00:1',
      '64:ff9b::8.8.8.8',
      '64:ff9b:1::a00:1',
      'not an ip',
    ])
      expect(isPublicAddress(ip), ip).toBe(false);
  });

  test('behavior: the allowance admits exactly the listed addresses', () => {
    expect(isPublicAddress('127.0.0.1', ['127.0.0.1'])).toBe(true);
    expect(isPublicAddress('127.0.0.2', ['127.0.0.1'])).toBe(false);
  });
});

describe('fetchImage', () => {
  test('error: by default a server on loopback is never contacted', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('x');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a.png`;
    const options = { maxBytes: 1024, timeoutMs: 2000, allowAddresses: [] };
    await expect(fetchImage(url, options)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(fetchImage(url.replace('127.0.0.1', 'localhost'), options)).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(fetchImage('file:///etc/passwd', options)).rejects.toMatchObject({
      code: 'invalid_request',
    });
    // Loopback written as an IPv4-compatible or mapped IPv6 literal.
    for (const host of ['[::127.0.0.1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'])
      await expect(fetchImage(url.replace('127.0.0.1', host), options), host).rejects.toMatchObject({
        code: 'invalid_request',
      });
    expect(hits).toBe(0);
    // Allowed: fetched, and cut at maxBytes (413).
    expect(await fetchImage(url, { ...options, allowAddresses: ['127.0.0.1'] })).toEqual(Buffer.from('x'));
    await expect(
      fetchImage(url, { ...options, maxBytes: 0, allowAddresses: ['127.0.0.1'] }),
    ).rejects.toMatchObject({ code: 'payload_too_large' });
    server.close();
  });
});
