// Where the user's token may go: a media URL named by the lookup answer gets it only over https (http only when the
// API itself is http) and never at a loopback, private or link-local address unless that is the API's own host.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const internal = new BlockList();
for (const [net, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) internal.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10]] as const) internal.addSubnet(net, prefix, 'ipv6');

/** Loopback, private (RFC 1918, unique-local, carrier-grade NAT), link-local or unspecified, IPv4-mapped included. */
export function isInternalAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped !== undefined) return internal.check(mapped, 'ipv4');
  return internal.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '');
async function addresses(hostname: string): Promise<string[]> {
  const host = bare(hostname);
  if (isIP(host) !== 0) return [host];
  return (await lookup(host, { all: true })).map((entry) => entry.address);
}

/** Why the token must not go to `url` (null: it may). `apiUrl` is MESSAGING_API_URL. Resolves the host name. */
export async function refusedMediaUrl(url: string, apiUrl: string): Promise<string | null> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return 'not a URL';
  }
  const api = new URL(apiUrl);
  if (target.protocol !== 'https:' && !(target.protocol === 'http:' && api.protocol === 'http:')) {
    return `${target.protocol.replace(':', '')} URL while the API is reached over ${api.protocol.replace(':', '')}`;
  }
  if (target.username !== '' || target.password !== '') return 'credentials in the URL';
  if (bare(target.hostname) === bare(api.hostname)) return null;
  const inside = (await addresses(target.hostname)).filter(isInternalAddress);
  if (inside.length === 0) return null;
  const own = new Set(await addresses(api.hostname).catch(() => []));
  const foreign = inside.find((ip) => !own.has(ip));
  return foreign === undefined ? null : `host ${target.hostname} is a loopback, private or link-local address (${foreign})`;
}

/**
 * A `lookup` for the download connections that refuses, at connect time, an internal address for any host but the
 * API's own (a name that resolved to a public address for the check cannot switch to an internal one for the connect).
 */
export function guardedLookup(apiUrl: string): LookupFunction {
  const apiHost = bare(new URL(apiUrl).hostname);
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family ?? 0;
    lookup(hostname, { family, all: true }).then((entries) => {
      if (bare(hostname) !== apiHost && entries.some((entry) => isInternalAddress(entry.address))) {
        callback(Object.assign(new Error(`${hostname} resolves to an internal address`), { code: 'EADDRNOTALLOWED' }), '');
        return;
      }
      if (options.all) callback(null, entries);
      else callback(null, entries[0]!.address, entries[0]!.family);
    }, (error: NodeJS.ErrnoException) => callback(error, ''));
  };
}
