// The last thing a sandbox boot prints: where the gateway is, the demo consumer and key, the console and
// its operator token, the API docs and two calls to try. The key lines keep the shapes the log-capture
// scan exempts (`Demo consumer key: …`, `Console operator token: …`, `  curl …`).

export interface SandboxBannerInfo {
  /** e.g. `http://127.0.0.1:3000` */
  base: string;
  consumerId?: string;
  demoKey?: string;
  /** Printed only when the sandbox generated it (a token set by the operator stays unprinted). */
  operatorToken?: string;
  operatorTokenFromEnv: boolean;
  sandboxed: readonly string[];
}

export function sandboxBanner(info: SandboxBannerInfo): string {
  const { base } = info;
  const key = info.demoKey ?? '<your key>';
  const rule = '-'.repeat(72);
  const lines = [
    rule,
    `Atrium sandbox: ${info.sandboxed.join(', ')} answered by built-in fakes with generated data`,
    `Atrium listening on ${base}`,
    ...(info.demoKey
      ? [
          `Demo consumer id: ${info.consumerId ?? 'demo'} (EMIS clients log in with it; the key is the password)`,
          `Demo consumer key: ${info.demoKey}`,
          'Browser apps: the demo key works from any http://localhost:<port> or http://127.0.0.1:<port> page',
        ]
      : []),
    `Console: ${base}/console`,
    info.operatorTokenFromEnv
      ? 'Console operator token: (the one you set in ATRIUM_OPERATOR_TOKEN)'
      : `Console operator token: ${info.operatorToken ?? ''}`,
    `API docs: ${base}/docs`,
    'Try:',
    `  curl -H "Authorization: Bearer ${key}" "${base}/macro/series/search?keyword=GDP&limit=3"`,
    `  curl "${base}/macro/layout/tables/TB1207?lang=en&token=${key}"`,
    rule,
  ];
  return `${lines.join('\n')}\n`;
}
