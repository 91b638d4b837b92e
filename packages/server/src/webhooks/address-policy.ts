import { BlockList, isIP } from 'node:net';

/** Address ranges a webhook may never reach (unless private targets are allowed), with their names. */
const RANGES: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'an IETF protocol address'],
  ['192.0.2.0', 24, 'ipv4', 'a documentation address'],
  ['192.88.99.0', 24, 'ipv4', 'a 6to4 relay address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['198.51.100.0', 24, 'ipv4', 'a documentation address'],
  ['203.0.113.0', 24, 'ipv4', 'a documentation address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved or broadcast address'],
  ['::', 128, 'ipv6', 'the unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['64:ff9b:1::', 48, 'ipv6', 'a local-use NAT64 address'],
  ['100::', 64, 'ipv6', 'a discard-only address'],
  ['2001::', 23, 'ipv6', 'an IETF protocol address (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::', 32, 'ipv6', 'a documentation address'],
  ['3fff::', 20, 'ipv6', 'a documentation address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['fec0::', 10, 'ipv6', 'a site-local address'],
  ['fc00::', 7, 'ipv6', 'a unique-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];

// One list per reason: BlockList only says whether an address matched, not which rule did.
const LISTS = RANGES.map(([network, prefix, family, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, reason };
});

/**
 * Why `address` (an IP literal) must not be a webhook target, or null when it is a public address.
 * IPv4-mapped (::ffff:a.b.c.d), SIIT (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64
 * (64:ff9b::/96) and 6to4 (2002:aabb:ccdd::/48) addresses are judged by the IPv4 address they
 * carry; anything that is not an IP literal is refused.
 */
export function blockedAddressReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIpv4(bare);
    if (embedded) return blockedAddressReason(embedded);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { list, reason } of LISTS) if (list.check(bare, type)) return reason;
  return null;
}

/**
 * The IPv4 address inside ::ffff:0:0/96, ::ffff:0:0:0/96, ::/96 (other than :: and ::1),
 * 64:ff9b::/96 (its last four bytes) or 2002::/16 (bytes 2 to 5), if any.
 */
function embeddedIpv4(address: string): string | null {
  const bytes = ipv6Bytes(address);
  const prefix = bytes.subarray(0, 12);
  const isZero = (from: number, to: number) => prefix.subarray(from, to).every((b) => b === 0);
  const mapped = isZero(0, 10) && prefix[10] === 0xff && prefix[11] === 0xff;
  const siit = isZero(0, 8) && prefix[8] === 0xff && prefix[9] === 0xff && isZero(10, 12);
  const compatible = isZero(0, 12) && ((bytes[12] | bytes[13] | bytes[14]) !== 0 || bytes[15] > 1);
  const nat64 = prefix[0] === 0x00 && prefix[1] === 0x64 && prefix[2] === 0xff && prefix[3] === 0x9b && isZero(4, 12);
  if (mapped || siit || compatible || nat64) return Array.from(bytes.subarray(12)).join('.');
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return Array.from(bytes.subarray(2, 6)).join('.');
  return null;
}

/** The 16 bytes of a valid IPv6 literal (with :: and an optional dotted IPv4 tail). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number);
    text = text.slice(0, tail.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [head, rest] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest ? rest.split(':') : [];
  const missing = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(missing).fill('0'), ...restGroups];
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  return bytes;
}
