import { http } from '../helpers/gateway.js';
import { cleanEnv, spawnGateway } from '../helpers/processes.js';

jest.setTimeout(60_000);

describe('npm start in sandbox mode serves the company, document and deal interfaces', () => {
  it('one route of each answers with the printed demo key (documents through the login step)', async () => {
    const gw = await spawnGateway(cleanEnv({ PORT: '0', HOST: '127.0.0.1' }));
    try {
      const key = /Demo consumer key: (\S+)/.exec(gw.output())?.[1];
      expect(key).toBeDefined();
      const h = { authorization: `Bearer ${key}` };
      const company = await http(`${gw.url}/company/companies/match?company_name=bank&limit=2`, {
        headers: h,
      });
      expect(company.status).toBe(200);
      expect(company.json().data.items.length).toBeGreaterThan(0);
      const docs = await http(`${gw.url}/documents/Search/query/?countries[0]=PL&limit=2`, { headers: h });
      expect(docs.status).toBe(200);
      expect(docs.json().data._type).toBe('Emis\\Entity\\Api\\Document\\Result');
      const dealsRes = await http(`${gw.url}/deals/SearchDeal/getDeals/?limit=2&token=${key}`);
      expect(dealsRes.status).toBe(200);
      expect(dealsRes.json().data.deals).toHaveLength(2);
      // The EMIS client's way: log in with the consumer id and key, then call with the session id.
      const login = await http(
        `${gw.url}/news/Auth/login/?username=demo&password=${encodeURIComponent(key!)}`,
      );
      expect(login.json()).toEqual({ data: { sessionId: key } });
      const topics = await http(`${gw.url}/news/Dictionary/getTopics/?sessionId=${encodeURIComponent(key!)}`);
      expect(topics.status).toBe(200);
      const ready = (await http(`${gw.url}/health/ready`)).json();
      const documents = ready.upstreams.find((u: { name: string }) => u.name === 'documents');
      expect(documents.session).toMatchObject({ state: 'active', logins: 1 });
    } finally {
      expect(await gw.stop()).toBe(0);
    }
    expect(gw.output()).toMatch(/documents: logged in \(first use\)/);
    expect(gw.output()).toMatch(/documents: logged out/);
  });
});
