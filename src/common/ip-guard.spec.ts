import { AppError, ErrorCode } from './app-error';
import { HostAllowList, isBlockedAddress } from './ip-guard';

describe('isBlockedAddress', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.100.100.200', 'metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.170', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'a loopback address, 127.0.0.1 in IPv4-mapped form'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::a00:1', 'private address (RFC 1918), 10.0.0.1 in NAT64 form'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['2002:7f00:1::1', 'loopback address, 127.0.0.1 in 6to4 form'],
    ['2002:a9fe:a9fe::', 'metadata'],
    ['::7f00:1', 'not a global unicast address'],
    ['::127.0.0.1', 'loopback'],
    ['100::1', 'not a global unicast address'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'reserved'],
    ['not-an-ip', 'not an IP address'],
    ['', 'not an IP address'],
  ])('%s is blocked as %s', (ip, reason) => {
    expect(isBlockedAddress(ip)).toContain(reason);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (ip) => {
    expect(isBlockedAddress(ip)).toBeNull();
  });
});

describe('HostAllowList', () => {
  it('refuses every private address when empty', () => {
    const list = new HostAllowList([]);
    expect(list.refusal('localhost', '127.0.0.1')).toContain('loopback');
    expect(list.refusal('example.com', '8.8.8.8')).toBeNull();
  });

  it('matches IPs and CIDRs, IPv4-mapped forms included', () => {
    const list = new HostAllowList(['10.0.0.0/8', '::1', '192.168.1.5', '::ffff:172.16.0.0/108']);
    expect(list.refusal('a', '10.200.0.1')).toBeNull();
    expect(list.refusal('a', '::ffff:10.0.0.1')).toBeNull();
    expect(list.refusal('a', '::1')).toBeNull();
    expect(list.refusal('a', '192.168.1.5')).toBeNull();
    expect(list.refusal('a', '172.16.3.4')).toBeNull();
    expect(list.refusal('a', '192.168.1.6')).toContain('private');
    expect(list.refusal('a', '11.0.0.1')).toBeNull();
    expect(list.refusal('a', '127.0.0.1')).toContain('loopback');
  });

  it('trusts what an allowed name resolves to, except cloud metadata', () => {
    const list = new HostAllowList(['Minio.Internal', '*.corp.test']);
    expect(list.refusal('minio.internal.', '10.0.0.7')).toBeNull();
    expect(list.refusal('files.corp.test', '192.168.0.1')).toBeNull();
    expect(list.refusal('corp.test', '192.168.0.1')).toContain('private');
    expect(list.refusal('evilcorp.test', '192.168.0.1')).toContain('private');
    expect(list.refusal('minio.internal', '169.254.169.254')).toContain('metadata');
    expect(list.refusal('minio.internal', 'garbage')).toBe('not an IP address');
  });

  it('opens a metadata address only through an explicit address entry', () => {
    expect(new HostAllowList(['169.254.169.254']).refusal('x', '169.254.169.254')).toBeNull();
  });

  it('rejects a malformed CIDR at construction', () => {
    expect(() => new HostAllowList(['10.0.0.0/33'])).toThrow(AppError);
    expect(() => new HostAllowList(['10.0.0.0/33'])).toThrow(expect.objectContaining({ code: ErrorCode.VALIDATION_FAILED }));
  });
});
