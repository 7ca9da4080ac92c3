import { ConfigError, loadConfig } from '../../src/config/atrium-config.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';

// ATRIUM_UPSTREAMS: which of the four interfaces a deployment serves. Only those are read and checked.
const MACRO = {
  UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
  UPSTREAM_MACRO_TOKEN: 'sbx_macro_served_0001',
};

function problemOf(env: Record<string, string>): string {
  try {
    loadConfig(env, UPSTREAMS);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('the configuration loaded');
}

describe('the interfaces a deployment serves', () => {
  it('unset: those whose base URL is configured', () => {
    expect(Object.keys(loadConfig(MACRO, UPSTREAMS).upstreams)).toEqual(['macro']);
  });

  it('listed: only those, whatever else is set (stale settings of the others are not read)', () => {
    const c = loadConfig(
      { ...MACRO, ATRIUM_UPSTREAMS: ' Macro ', UPSTREAM_COMPANY_BASE_URL: 'not a url' },
      UPSTREAMS,
    );
    expect(Object.keys(c.upstreams)).toEqual(['macro']);
  });

  it('a listed interface without its settings stops the boot naming the variables', () => {
    expect(problemOf({ ...MACRO, ATRIUM_UPSTREAMS: 'macro,deals' })).toMatch(
      /^Invalid configuration: UPSTREAM_DEALS_BASE_URL \(not set: ATRIUM_UPSTREAMS lists deals/,
    );
    expect(
      problemOf({
        ...MACRO,
        ATRIUM_UPSTREAMS: 'macro,company',
        UPSTREAM_COMPANY_BASE_URL: 'http://127.0.0.1:9',
      }),
    ).toBe('Invalid configuration: UPSTREAM_COMPANY_TOKEN');
  });

  it('an unknown name is named with the rule', () => {
    expect(problemOf({ ...MACRO, ATRIUM_UPSTREAMS: 'macro,news' })).toBe(
      'Invalid configuration: ATRIUM_UPSTREAMS (unknown interface "news": expected a comma-separated list of ' +
        'macro, company, documents, deals)',
    );
  });

  it('no interface at all is refused', () => {
    expect(problemOf({})).toMatch(/^Invalid configuration: ATRIUM_UPSTREAMS \(no interface is served/);
  });
});
