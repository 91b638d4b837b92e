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
    ['::ffff:0:7f00:1', /loopback/],
    ['::ffff:0:10.0.0.1', /private/],
    ['2002:7f00:1::', /loopback/],
    ['2002:a9fe:a9fe::1', /link-local/],
    ['64:ff9b:1::7f00:1', /local-use NAT64/],
    ['100::1', /discard-only/],
    ['2001::1', /IETF protocol/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /IETF protocol/],
    ['2001:2::1', /IETF protocol/],
    ['2001:db8::1', /documentation/],
    ['3fff::1', /documentation/],
    ['192.0.2.1', /documentation/],
    ['198.51.100.1', /documentation/],
    ['203.0.113.9', /documentation/],
    ['192.88.99.1', /6to4 relay/],
    ['localhost', /not an IP/],
  ];
  for (const [address, reason] of blocked) {
    it(`refuses ${address}`, () => assert.match(blockedAddressReason(address) ?? 'allowed', reason));
  }

  const allowed = ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2001:4860:4860::8888', '2002:808:808::1', '2a00:1450:4001::200e', '203.0.114.1'];
  for (const address of allowed) {
    it(`allows ${address}`, () => assert.equal(blockedAddressReason(address), null));
  }
});
