// Where event endpoints may point: https (http only when allowed), never at loopback, private, link-local, CGNAT,
// multicast or reserved addresses unless inside the allowed CIDRs. Checked when an endpoint is saved and again on
// every connection, inside the connector's lookup, so a DNS answer that changes cannot get around it.
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface Resolved { address: string; family: number }
/** Resolves a host name to all its addresses (tests inject their own). */
export type Resolve = (hostname: string) => Promise<Resolved[]>;
export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

const FORBIDDEN_V4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4'];
const FORBIDDEN_V6 = ['::/127', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/23', '2001:db8::/32', '2002::/16', 'fc00::/7', 'fe80::/10',
  'fec0::/10', 'ff00::/8'];

function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix] = cidr.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}
const forbidden = blockList([...FORBIDDEN_V4, ...FORBIDDEN_V6]);

/** IPv4-mapped IPv6 (`::ffff:a.b.c.d`, or `::ffff:7f00:1` as URLs write it) is the IPv4 address. */
function unmapped(address: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (dotted !== undefined) return dotted;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return address;
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

export class AddressRefused extends Error {
  readonly code = 'EADDRREFUSED';
}

export function createAddressPolicy(options: { allowHttp: boolean; allowedCidrs: readonly string[]; resolve?: Resolve }) {
  const allowed = blockList(options.allowedCidrs);
  const resolve = options.resolve ?? systemResolve;

  /** Why this address may not be connected to; undefined when it may. */
  function refusal(address: string): string | undefined {
    // IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address.
    const ip = unmapped(address);
    const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (isIP(ip) === 0) return `${address} is not an IP address`;
    if (allowed.check(ip, family)) return undefined;
    return forbidden.check(ip, family) ? `${address} is a loopback, private, link-local, shared or reserved address` : undefined;
  }

  /** The addresses of `hostname`, all of them allowed; throws AddressRefused otherwise. */
  async function allowedAddresses(hostname: string): Promise<Resolved[]> {
    const bare = hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(bare) !== 0 ? [{ address: bare, family: isIP(bare) }] : await resolve(bare);
    if (addresses.length === 0) throw new AddressRefused(`${hostname} does not resolve`);
    for (const { address } of addresses) {
      const why = refusal(address);
      if (why !== undefined) throw new AddressRefused(`${hostname} resolves to ${why}`);
    }
    return addresses;
  }

  return {
    allowedAddresses,
    /** Checks an endpoint URL as saved: scheme, no credentials, and every address it resolves to. A message when refused. */
    async checkUrl(text: string): Promise<string | undefined> {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        return 'url is not a valid absolute URL';
      }
      if (url.protocol !== 'https:' && !(options.allowHttp && url.protocol === 'http:')) {
        return options.allowHttp ? 'url must use http or https' : 'url must use https (plain http is allowed only with EVENT_ENDPOINTS_ALLOW_HTTP=true)';
      }
      if (url.username !== '' || url.password !== '') return 'url must not carry a user name or password';
      try {
        await allowedAddresses(url.hostname);
      } catch (error) {
        return `url refused: ${(error as Error).message}`;
      }
      return undefined;
    },
    /** The connector's lookup: resolves and checks at connect time (net.connect calls it for host names). */
    lookup: ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      allowedAddresses(hostname).then(
        (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family)),
        (error: unknown) => callback(error),
      );
    }) as unknown as LookupFunction,
  };
}
export type AddressPolicy = ReturnType<typeof createAddressPolicy>;
