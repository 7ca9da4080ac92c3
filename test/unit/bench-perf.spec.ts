import { parsePerfReport, summariseReport } from '../../bench/lib/perf-record.js';

// A trimmed `perf report --children --sort sym -g none --stdio` of a gateway under load.
const REPORT = `# Samples: 16K of event 'cpu-clock:ppp'
#
# Children      Self  Symbol
# ........  ........  ..................
#
    94.44%     0.00%  [.] node::Start
    60.99%     0.48%  [.] JS:*parserOnHeadersComplete node:_http_common:71:33
    35.87%     0.29%  [.] JS:*sendProxyResponse file:///work/main/dist/proxy/proxy.service.js:188:34
    26.48%     0.39%  [k] do_syscall_64
    11.32%    11.32%  [k] _raw_spin_unlock_irqrestore
     6.66%     0.20%  [.] JS:* file:///work/main/dist/metrics/request-observer.js:46:39
     3.00%     2.00%  [.] v8::internal::ScavengerCollector::CollectGarbage
     2.00%     2.00%  [k] tcp_sendmsg_locked

`;

describe('bench: perf profiles (CPU time, the kernel included)', () => {
  it('reads inclusive and self shares per symbol, skipping headers', () => {
    const lines = parsePerfReport(REPORT);
    expect(lines).toHaveLength(8);
    expect(lines[3]).toEqual({ children: 26.48, self: 0.39, symbol: '[k] do_syscall_64' });
  });

  it('splits kernel and user time and lists JavaScript frames by inclusive time, in µs per request', () => {
    const text = summariseReport(parsePerfReport(REPORT), 40, 2);
    // Kernel self: 0.39 + 11.32 + 2.00 = 13.71 % of 40 µs.
    expect(text).toMatch(/kernel \(self\)\s+13\.7 %\s+≈\s+5\.5 µs/);
    expect(text).toMatch(/user side \(self\)\s+86\.3 %/);
    expect(text).toMatch(/garbage collector\s+2\.0 %\s+≈\s+0\.8 µs/);
    const frames = text.split('\n').filter((l) => l.includes('µs  '));
    expect(frames.map((l) => l.trim().split(/\s+/).pop())).toEqual([
      'node:_http_common:71:33',
      'file:///work/main/dist/proxy/proxy.service.js:188:34',
    ]);
  });
});
