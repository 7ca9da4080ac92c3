import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import { FakeCompanyUpstream } from '../../src/sandbox/company/fake-company.upstream.js';
import { FakeDocumentsUpstream } from '../../src/sandbox/documents/fake-documents.upstream.js';
import { companies } from '../../src/sandbox/company/company.data.js';
import { documents } from '../../src/sandbox/documents/documents.data.js';
import type { FakeUpstream } from '../../src/sandbox/fake-upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { withGateway } from '../helpers/gateway.js';

jest.setTimeout(60_000);

const FILE_BYTES = 50 * 1024 * 1024;
/** Live memory (after a full GC) may grow by at most this much while a 50 MB file passes through. */
const GROWTH_BOUND = 12 * 1024 * 1024;
const MiB = 1024 * 1024;

// A thorough GC on demand, so samples measure live memory rather than garbage waiting for collection
// (streams allocate a fresh buffer per socket read, and V8 frees those lazily: plain RSS says little here).
setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** Heap plus Buffer memory of this process (gateway, fake upstream and client) still reachable after a GC. */
function liveBytes(): number {
  let least = Infinity;
  // Buffer memory is released in a sweep after the GC proper: the lower of two readings is the live size.
  for (let i = 0; i < 2; i++) {
    gc();
    const m = process.memoryUsage();
    least = Math.min(least, m.heapUsed + m.arrayBuffers);
  }
  return least;
}

/**
 * Waits until the upstream has stopped sending while the client does not read: backpressure has reached
 * the fake (a streaming gateway), or the whole file has been sent (a buffering one). The same byte count in
 * three readings 50 ms apart counts as stopped.
 */
async function upstreamStalled(fake: FakeUpstream): Promise<void> {
  const seen: number[] = [];
  await eventually(
    () => {
      seen.push(fake.bytesWrittenOnOpenConnections);
      return seen.length >= 3 && seen.slice(-3).every((n) => n === seen.at(-1));
    },
    { intervalMs: 50, what: 'the upstream to stop sending' },
  );
}

/**
 * Downloads `url` as a client would, counting bytes without keeping them. The client stops reading twice,
 * after the first MiB and half-way, and live memory is measured while it waits: a streaming gateway then
 * holds little more than its stream buffers (backpressure stops the upstream read), while one that
 * buffers has the whole file in memory before it sends the first byte.
 */
async function download(url: string, key: string, fake: FakeUpstream, measure = true) {
  const res = await request(url, { headers: { authorization: `Bearer ${key}` } });
  const it = res.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let bytes = 0;
  let peak = 0;
  for (const stop of [MiB, FILE_BYTES / 2, Infinity]) {
    while (bytes < stop) {
      const r = await it.next();
      if (r.done) break;
      bytes += r.value.length;
    }
    if (!measure || stop === Infinity) continue;
    await upstreamStalled(fake);
    peak = Math.max(peak, liveBytes());
  }
  return { bytes, peak, headers: res.headers, status: res.statusCode };
}

describe('files stream through the gateway (live memory measured)', () => {
  const app = testConsumer({ id: 'files', upstreams: new Set(['company', 'documents']) });
  const documentsFake = new FakeDocumentsUpstream({
    token: 'sbx_stream_docs_token',
    username: 'sbx_stream_user',
    password: 'sbx_stream_password_1',
  });
  const companyFake = new FakeCompanyUpstream({ token: 'sbx_stream_company_token' });
  const pdfKey = documents()
    .flatMap((d) => d.files)
    .find((f) => f.format === 'PDF')!.key;
  const companyId = companies()[0].companyId;
  const gw = withGateway({
    upstreams: {
      company: { fake: companyFake, token: 'sbx_stream_company_token' },
      documents: { fake: documentsFake, username: 'sbx_stream_user', password: 'sbx_stream_password_1' },
    },
    env: {
      UPSTREAM_COMPANY_TIMEOUT_MS: '50000',
      UPSTREAM_DOCUMENTS_TIMEOUT_MS: '50000',
      // A buffered answer may not exceed 1 MiB: a gateway that buffered files would fail outright.
      ATRIUM_MAX_RESPONSE_BYTES: String(MiB),
    },
    consumers: [app],
  });

  it.each([
    [
      'documents Search/getFile/',
      () => `${gw.url}/documents/Search/getFile/?key=${pdfKey}`,
      documentsFake,
      'application/pdf',
    ],
    [
      'company external_download',
      () => `${gw.url}/company/companies/${companyId}/external_download/6419`,
      companyFake,
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    ],
  ])(
    '%s: 50 MB pass through with live memory growing by far less than the file',
    async (name, url, fake, type) => {
      // Warm-up: pools, JIT, the documents login.
      for (const f of [documentsFake, companyFake]) f.behave({ fileBytes: 2 * MiB });
      expect((await download(url(), app.key, fake, false)).status).toBe(200);
      for (const f of [documentsFake, companyFake]) f.behave({ fileBytes: FILE_BYTES });
      const before = liveBytes();
      const r = await download(url(), app.key, fake);
      expect(r.status).toBe(200);
      expect(r.bytes).toBe(FILE_BYTES);
      expect(r.headers['content-type']).toBe(type);
      expect(r.headers['content-length']).toBe(String(FILE_BYTES));
      expect(String(r.headers['content-disposition'])).toMatch(/^attachment; filename="/);
      const growth = r.peak - before;
      console.log(
        `${name}: live memory ${(before / MiB).toFixed(1)} MiB → peak ${(r.peak / MiB).toFixed(1)} MiB ` +
          `(+${(growth / MiB).toFixed(1)} MiB for a 50 MiB file)`,
      );
      expect(growth).toBeLessThan(GROWTH_BOUND);
    },
  );
});
