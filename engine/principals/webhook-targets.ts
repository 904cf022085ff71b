/**
 * Where webhooks may post: public unicast addresses only, unless the operator allows private
 * targets (`webhooks.allow_private_targets`). Checked on the address actually connected to (a DNS
 * lookup hook on the socket), so DNS rebinding cannot slip a private address in after the check.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

function privateRanges(): BlockList {
  const b = new BlockList();
  for (const [net, bits] of [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
  ] as const) b.addSubnet(net, bits, 'ipv4');
  for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) b.addSubnet(net, bits, 'ipv6');
  return b;
}

const PRIVATE = privateRanges();

/** Whether `address` (an IP literal) is private, loopback, link-local, multicast or reserved. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
    return PRIVATE.check(address, 'ipv6');
  }
  return PRIVATE.check(address, 'ipv4');
}

/** For URL host names: IP literals (with or without brackets) that are private. */
export function isPrivateAddressLiteral(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  return isIP(h) !== 0 && isPrivateAddress(h);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls sockets that refuses private results unless allowed. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) {
        const e = Object.assign(new Error(`webhook target ${hostname} resolves only to private addresses`), { code: 'EPRIVATETARGET' });
        return callback(e, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
