import ipaddr from 'ipaddr.js';
import { AppError, ErrorCode } from './app-error';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

interface BlockedRange {
  cidr: Cidr;
  reason: string;
  /** Metadata endpoints hand out cloud credentials: only an explicit IP/CIDR entry may unlock them. */
  metadata?: boolean;
}

function range(cidr: string, reason: string, metadata = false): BlockedRange {
  return { cidr: ipaddr.parseCIDR(cidr), reason, metadata };
}

// First match wins, so the specific entries (metadata, broadcast) come before the ranges that hold them.
// Sources: IANA IPv4 and IPv6 special-purpose address registries.
const IPV4_BLOCKED: BlockedRange[] = [
  range('169.254.169.254/32', 'a cloud metadata address', true),
  range('100.100.100.200/32', 'a cloud metadata address', true),
  range('255.255.255.255/32', 'the broadcast address'),
  range('0.0.0.0/8', 'an unspecified ("this network") address'),
  range('10.0.0.0/8', 'a private address (RFC 1918)'),
  range('100.64.0.0/10', 'a carrier-grade NAT address (RFC 6598)'),
  range('127.0.0.0/8', 'a loopback address'),
  range('169.254.0.0/16', 'a link-local address'),
  range('172.16.0.0/12', 'a private address (RFC 1918)'),
  range('192.0.0.0/24', 'a reserved address (IETF protocol assignments)'),
  range('192.0.2.0/24', 'a documentation address'),
  range('192.88.99.0/24', 'a reserved address (6to4 relay anycast)'),
  range('192.168.0.0/16', 'a private address (RFC 1918)'),
  range('198.18.0.0/15', 'a benchmarking address'),
  range('198.51.100.0/24', 'a documentation address'),
  range('203.0.113.0/24', 'a documentation address'),
  range('224.0.0.0/4', 'a multicast address'),
  range('240.0.0.0/4', 'a reserved address'),
];

const IPV6_BLOCKED: BlockedRange[] = [
  range('fd00:ec2::254/128', 'a cloud metadata address', true),
  range('::/128', 'an unspecified address'),
  range('::1/128', 'a loopback address'),
  range('fc00::/7', 'a unique-local (private) address'),
  range('fe80::/10', 'a link-local address'),
  range('fec0::/10', 'a site-local address (deprecated)'),
  range('ff00::/8', 'a multicast address'),
  range('2001::/23', 'a reserved address (IETF protocol assignments)'),
  range('2001:db8::/32', 'a documentation address'),
  range('3fff::/20', 'a documentation address'),
];

/** Everything outside it (IPv4-compatible ::/96, 100::/64 discard, unassigned space...) is not routable on the internet. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

interface Embedding {
  cidr: Cidr;
  name: string;
  extract: (ip: ipaddr.IPv6) => ipaddr.IPv4;
}

/**
 * IPv6 forms that carry an IPv4 address the packet may end up at: judged by that IPv4 address,
 * so a public host behind NAT64 stays reachable and ::ffff:127.0.0.1 does not slip through.
 */
const IPV4_EMBEDDINGS: Embedding[] = [
  { cidr: ipaddr.parseCIDR('::ffff:0:0/96'), name: 'IPv4-mapped', extract: lowIPv4 },
  { cidr: ipaddr.parseCIDR('64:ff9b::/96'), name: 'NAT64', extract: lowIPv4 },
  { cidr: ipaddr.parseCIDR('2002::/16'), name: '6to4', extract: sixToFourIPv4 },
];

function lowIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = ip.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12, 16));
}

function sixToFourIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = ip.toByteArray();
  return new ipaddr.IPv4(bytes.slice(2, 6));
}

function parseAddress(ip: string): Address | null {
  try {
    return ipaddr.parse(ip);
  } catch {
    return null;
  }
}

function inRange(address: Address, cidr: Cidr): boolean {
  return address.kind() === cidr[0].kind() && address.match(cidr);
}

function findBlockedRange(address: Address): BlockedRange | null {
  if (address.kind() === 'ipv4') return IPV4_BLOCKED.find((r) => inRange(address, r.cidr)) ?? null;
  const ipv6 = address as ipaddr.IPv6;
  const embedding = IPV4_EMBEDDINGS.find((e) => inRange(ipv6, e.cidr));
  if (embedding) {
    const inner = embedding.extract(ipv6);
    const found = findBlockedRange(inner);
    return found && { ...found, reason: `${found.reason}, ${inner.toString()} in ${embedding.name} form` };
  }
  const listed = IPV6_BLOCKED.find((r) => inRange(ipv6, r.cidr));
  if (listed) return listed;
  if (!inRange(ipv6, IPV6_GLOBAL_UNICAST)) return { cidr: IPV6_GLOBAL_UNICAST, reason: 'not a global unicast address' };
  return null;
}

/**
 * Why an outbound connection to `ip` must be refused, or null when it is a public address.
 * Anything that is not a valid IP address is refused too.
 */
export function isBlockedAddress(ip: string): string | null {
  const address = parseAddress(ip);
  if (!address) return 'not an IP address';
  return findBlockedRange(address)?.reason ?? null;
}

/** IPv4-mapped IPv6 addresses compare as the IPv4 address they stand for. */
function unmapped(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

function normalizeHostname(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

/**
 * The operator's exceptions (FETCH_ALLOWED_HOSTS): exact host names, `*.suffix` wildcards, IPs and
 * CIDRs. A host name entry trusts whatever that name resolves to, except cloud metadata addresses,
 * which only an IP or CIDR entry can open.
 */
export class HostAllowList {
  private readonly names = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly cidrs: Cidr[] = [];

  constructor(entries: readonly string[]) {
    for (const raw of entries) this.add(raw.trim());
  }

  private add(entry: string): void {
    if (!entry) return;
    if (entry.includes('/')) this.cidrs.push(parseAllowedCidr(entry));
    else if (ipaddr.isValid(stripBrackets(entry))) this.cidrs.push(singleAddressCidr(stripBrackets(entry)));
    else if (entry.startsWith('*.')) this.suffixes.push(normalizeHostname(entry.slice(1)));
    else this.names.add(normalizeHostname(entry));
  }

  allowsHostname(hostname: string): boolean {
    const name = normalizeHostname(hostname);
    return this.names.has(name) || this.suffixes.some((suffix) => name.endsWith(suffix));
  }

  allowsAddress(ip: string): boolean {
    const address = parseAddress(ip);
    if (!address) return false;
    const plain = unmapped(address);
    return this.cidrs.some((cidr) => inRange(plain, cidr));
  }

  /** Why `ip`, reached through `hostname`, must be refused; null when it may be connected to. */
  refusal(hostname: string, ip: string): string | null {
    const address = parseAddress(ip);
    if (!address) return 'not an IP address';
    const blocked = findBlockedRange(address);
    if (!blocked || this.allowsAddress(ip)) return null;
    if (this.allowsHostname(hostname) && !blocked.metadata) return null;
    return blocked.reason;
  }
}

function stripBrackets(entry: string): string {
  return entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
}

function parseAllowedCidr(entry: string): Cidr {
  let cidr: Cidr;
  try {
    cidr = ipaddr.parseCIDR(entry);
  } catch {
    throw new AppError(ErrorCode.VALIDATION_FAILED, `FETCH_ALLOWED_HOSTS: "${entry}" is not a valid CIDR`);
  }
  const [address, bits] = cidr;
  // Addresses are compared unmapped, so an IPv4-mapped range must be too.
  const mapped = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96;
  return mapped ? [unmapped(address), bits - 96] : cidr;
}

function singleAddressCidr(entry: string): Cidr {
  const address = unmapped(ipaddr.parse(entry));
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}
