import { parseTrustedProxies } from '../../src/config/trusted-proxies.js';
import { parseTraceparent, traceparentOf, untracedContext } from '../../src/core/tracing/trace-context.js';

describe('W3C trace context', () => {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';
  it('reads a valid traceparent and refuses the invalid ones', () => {
    expect(parseTraceparent(`00-${id}-00f067aa0ba902b7-01`)).toEqual({
      traceId: id,
      parentId: '00f067aa0ba902b7',
      flags: '01',
      tracestate: undefined,
    });
    expect(parseTraceparent(`00-${id}-00f067aa0ba902b7-00`, 'vendor=x,other=y')).toMatchObject({
      flags: '00',
      tracestate: 'vendor=x,other=y',
    });
    // A later version may add fields; version 00 may not.
    expect(parseTraceparent(`01-${id}-00f067aa0ba902b7-01-extra`)?.traceId).toBe(id);
    for (const bad of [
      `00-${id}-00f067aa0ba902b7-01-extra`,
      `ff-${id}-00f067aa0ba902b7-01`,
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${id}-${'0'.repeat(16)}-01`,
      `00-${id.toUpperCase()}-00f067aa0ba902b7-01`,
      'garbage',
      undefined,
      ['x'],
    ])
      expect(parseTraceparent(bad)).toBeUndefined();
  });

  it('starts a trace when none came, keeps the one that came, and writes the header', () => {
    const started = untracedContext(undefined, 'a=b');
    expect(started.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(started.tracestate).toBeUndefined();
    const kept = untracedContext(`00-${id}-00f067aa0ba902b7-01`, 'vendor=x');
    expect(kept).toMatchObject({ traceId: id, flags: '01', tracestate: 'vendor=x' });
    expect(kept.spanId).not.toBe('00f067aa0ba902b7');
    expect(traceparentOf(kept)).toBe(`00-${id}-${kept.spanId}-01`);
    expect(untracedContext(undefined, undefined).traceId).not.toBe(started.traceId);
    // A tracestate that is not one (control characters, a header smuggled in) is not passed on.
    expect(untracedContext(`00-${id}-00f067aa0ba902b7-01`, 'a=b\r\nx: y').tracestate).toBeUndefined();
  });
});

describe('ATRIUM_TRUSTED_PROXIES', () => {
  it('takes addresses and CIDRs, IPv4 and IPv6, and refuses anything else', () => {
    expect(parseTrustedProxies(' 10.0.0.0/8, 192.168.1.7 ,::1, fd00::/8')).toEqual([
      '10.0.0.0/8',
      '192.168.1.7',
      '::1',
      'fd00::/8',
    ]);
    expect(parseTrustedProxies('')).toEqual([]);
    for (const bad of ['10.0.0.0/33', 'loopback', '10.0.0/8', '::1/129', '10.0.0.1/x'])
      expect(parseTrustedProxies(bad)).toBeUndefined();
  });
});
