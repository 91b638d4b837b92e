import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockedAddressReason } from './address-policy.js';

describe('webhook address policy', () => {
  const blocked: [string, RegExp][] = [
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['[::1]', /loopback/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['fd00::1', /unique-local/],
    ['fc00::abcd', /unique-local/],
    ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /loopback/],
    ['::ffff:7f00:1', /loopback/],
    ['::ffff:10.0.0.1', /private/],
    ['::ffff:169.254.169.254', /link-local/],
    ['::ffff:a9fe:a9fe', /link-local/],
    ['::127.0.0.1', /loopback/],
    ['64:ff9b::a00:1', /private/],
    ['64:ff9b::127.0.0.1', /loopback/],
    ['localhost', /not an IP/],
  ];
  for (const [address, reason] of blocked) {
    it(`refuses ${address}`, () => assert.match(blockedAddressReason(address) ?? 'allowed', reason));
  }

  const allowed = ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2001:4860:4860::8888'];
  for (const address of allowed) {
    it(`allows ${address}`, () => assert.equal(blockedAddressReason(address), null));
  }
});
