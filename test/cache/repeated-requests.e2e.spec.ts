import { testConsumer } from '../helpers/consumers.js';
import { withGateway } from '../helpers/gateway.js';

/**
 * A GET asked again: answered from the cache with the same bytes, except where the request says otherwise
 * (`no-cache`, another Accept, `fields=`), and while the vendor cools down. The sandbox macro fake counts
 * the vendor calls.
 */
describe('requests asked again', () => {
  const consumer = testConsumer({ id: 'seen-requests' });
  const gw = withGateway({ sandbox: true, consumers: [consumer] });
  const get = (path: string, headers: Record<string, string> = {}) =>
    gw.request(path, consumer.key, { headers });
  const vendorCalls = () => gw.sandbox.macro.requests.length;
  beforeEach(() => gw.sandbox.macro.reset());

  it('the second and later calls are HITs with the same bytes', async () => {
    const path = '/macro/series/310902311/data?startDate=2020-01-01';
    const first = await get(path);
    expect(first.headers['x-cache']).toBe('MISS');
    for (let i = 0; i < 3; i++) {
      const again = await get(path);
      expect(again.headers['x-cache']).toBe('HIT');
      expect(again.text).toBe(first.text);
    }
    expect(vendorCalls()).toBe(1);
  });

  it('Cache-Control: no-cache still reaches the vendor', async () => {
    const path = '/macro/series/310902312/data';
    await get(path);
    await get(path);
    expect(vendorCalls()).toBe(1);
    const fresh = await get(path, { 'cache-control': 'no-cache' });
    expect(fresh.headers['x-cache']).toBe('MISS');
    expect(vendorCalls()).toBe(2);
  });

  it('another Accept is another request: XML is not answered from the JSON entry', async () => {
    const path = '/macro/series/310902313/data';
    const json = await get(path);
    const xml = await get(path, { accept: 'application/xml' });
    expect(xml.headers['content-type']).toMatch(/xml/);
    expect(xml.headers['x-cache']).toBe('MISS');
    const xmlAgain = await get(path, { accept: 'application/xml' });
    expect(xmlAgain.headers['x-cache']).toBe('HIT');
    expect(xmlAgain.text).toBe(xml.text);
    expect((await get(path)).text).toBe(json.text);
    expect(vendorCalls()).toBe(2);
  });

  it('fields= on a repeated request selects from the whole cached answer every time', async () => {
    const path = '/macro/series/310902314/data';
    const whole = (await get(path)).json();
    const picked = `${path}?fields=data[].id`;
    const a = await get(picked);
    const b = await get(picked);
    expect(b.headers['x-cache']).toBe('HIT');
    expect(a.json()).toEqual({ data: whole.data.map((d: { id: unknown }) => ({ id: d.id })) });
    expect(b.text).toBe(a.text);
    expect((await get(path)).json()).toEqual(whole);
    expect(vendorCalls()).toBe(1);
  });

  it('a URL that carries the consumer key is answered from the same entry', async () => {
    const path = `/macro/series/310902315/data?token=${encodeURIComponent(consumer.key)}`;
    const first = await gw.request(path);
    const second = await gw.request(path);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers['x-cache']).toBe('HIT');
    expect((await get('/macro/series/310902315/data')).headers['x-cache']).toBe('HIT');
  });

  // Last: the vendor's cooldown it starts outlives the test.
  it('a request refused while the vendor cools down costs no vendor call; hits are still served', async () => {
    const hot = '/macro/series/310902316/data';
    await get(hot);
    gw.sandbox.macro.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 30 } });
    // The vendor's 429 starts the cooldown; the next new URL is refused before the vendor.
    expect((await get('/macro/series/310902317/data')).status).toBe(429);
    const calls = vendorCalls();
    const refused = await get('/macro/series/310902318/data');
    expect(refused.status).toBe(429);
    expect(refused.json().error.code).toBe('UPSTREAM_RATE_LIMITED');
    expect(vendorCalls()).toBe(calls);
    expect((await get(hot)).headers['x-cache']).toBe('HIT');
  });
});
