import { createHash } from 'node:crypto';

// The operator console: one self-contained page (inline CSS and JS, hand-rolled SVG charts, no external
// fetch). The script builds every node with createElement/textContent (no innerHTML), so nothing the state
// carries (error messages, ids) can become markup. Keep backticks and "${" out of the strings below.

const STYLE = `
:root {
  --bg: #0f1419; --panel: #171e26; --panel2: #1d2630; --line: #2a3542; --text: #e6edf3; --muted: #8b98a5;
  --ok: #3fb950; --warn: #d29922; --bad: #f85149; --accent: #58a6ff; --accent2: #a371f7;
  color-scheme: dark;
}
* { box-sizing: border-box; }
html, body { margin: 0; background: var(--bg); color: var(--text);
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { display: flex; align-items: center; gap: 12px; padding: 10px 20px; background: var(--panel);
  border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; flex-wrap: wrap; }
header h1 { font-size: 17px; margin: 0 8px 0 0; font-weight: 650; letter-spacing: .2px; }
.spacer { flex: 1; }
main { padding: 16px 20px 28px; max-width: 1680px; margin: 0 auto; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: 1px; color: var(--muted); margin: 6px 0 10px; font-weight: 600; }
.pill { display: inline-flex; align-items: center; gap: 6px; padding: 2px 9px; border-radius: 999px;
  font-size: 12px; background: var(--panel2); border: 1px solid var(--line); color: var(--muted); white-space: nowrap; }
.pill.ok { color: var(--ok); border-color: #1f6f33; }
.pill.warn { color: var(--warn); border-color: #7a5a12; }
.pill.bad { color: var(--bad); border-color: #8e2c28; }
.dot { width: 8px; height: 8px; border-radius: 50%; background: currentColor; display: inline-block; }
button { background: var(--panel2); color: var(--text); border: 1px solid var(--line); border-radius: 6px;
  padding: 5px 12px; font: inherit; cursor: pointer; }
button:hover { border-color: var(--accent); }
button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(310px, 1fr)); gap: 14px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; min-width: 0; }
.card.off { opacity: .62; }
.card .top { display: flex; align-items: center; gap: 8px; margin-bottom: 2px; }
.card .name { font-size: 18px; font-weight: 650; }
.card .top.sub { margin: 2px 0 8px; }
.card .title { color: var(--muted); font-size: 12px; min-width: 0;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row { display: flex; gap: 14px; align-items: center; margin: 8px 0; }
.kpi { min-width: 0; }
.kpi .label { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .6px; }
.kpi .value { font-size: 22px; font-weight: 650; font-variant-numeric: tabular-nums; }
.kpi .value small { font-size: 12px; color: var(--muted); font-weight: 500; margin-left: 3px; }
.na { color: var(--muted); font-weight: 500; }
.meter { margin: 8px 0; }
.meter .head { display: flex; justify-content: space-between; font-size: 12px; color: var(--muted); }
.meter .head b { color: var(--text); font-weight: 600; font-variant-numeric: tabular-nums; }
.cool { border-radius: 8px; padding: 7px 10px; margin: 10px 0 8px; font-size: 13px; display: flex;
  justify-content: space-between; align-items: center; background: var(--panel2); border: 1px solid var(--line); }
.cool.active { background: #3b1618; border-color: #8e2c28; color: #ffb4ae; }
.cool b { font-size: 16px; font-variant-numeric: tabular-nums; }
.errors { margin-top: 8px; border-top: 1px solid var(--line); padding-top: 8px; }
.errors .none { color: var(--muted); font-size: 12px; }
.err { display: grid; grid-template-columns: 58px 36px 1fr; gap: 6px; font-size: 12px; padding: 2px 0; }
.err .when { color: var(--muted); font-variant-numeric: tabular-nums; }
.err .st { font-weight: 650; color: var(--warn); }
.err .st.s5 { color: var(--bad); }
.err .what { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.err .what i { color: var(--muted); font-style: normal; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; color: var(--muted); font-weight: 600; font-size: 11px; text-transform: uppercase;
  letter-spacing: .6px; padding: 6px 10px; border-bottom: 1px solid var(--line); }
td { padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
td.id { font-weight: 650; }
.chips { display: flex; gap: 4px; flex-wrap: wrap; }
.chip { font-size: 11px; padding: 1px 7px; border-radius: 4px; background: var(--panel2); border: 1px solid var(--line); color: var(--muted); }
.quota { display: grid; grid-template-columns: 84px 150px auto; gap: 8px; align-items: center; font-size: 12px; }
.quota .q { font-variant-numeric: tabular-nums; color: var(--muted); }
.section { margin-top: 22px; }
.login { max-width: 420px; margin: 12vh auto; background: var(--panel); border: 1px solid var(--line);
  border-radius: 12px; padding: 24px 26px; }
.login h1 { font-size: 20px; margin: 0 0 6px; }
.login p { color: var(--muted); margin: 0 0 16px; }
.login input { width: 100%; padding: 9px 11px; border-radius: 6px; border: 1px solid var(--line);
  background: var(--bg); color: var(--text); font: inherit; margin-bottom: 12px; }
.login .msg { color: var(--bad); min-height: 20px; font-size: 13px; }
.hidden { display: none !important; }
.foot { color: var(--muted); font-size: 12px; margin-top: 18px; }
svg text { font: 10px system-ui, sans-serif; fill: var(--muted); }
`;

const SCRIPT = `
(function () {
  'use strict';
  var KEY = 'atrium.operatorToken';
  var REFRESH_MS = 2000;
  var SVGNS = 'http://www.w3.org/2000/svg';
  var stateUrl = location.pathname.replace(/\\/+$/, '') + '/api/state';
  var timer = null;
  var paused = false;
  var lastOk = 0;
  // Server clock minus this laptop's: error times are the server's.
  var skew = 0;

  function el(tag, attrs, kids) {
    var n = document.createElement(tag);
    setAttrs(n, attrs);
    append(n, kids);
    return n;
  }
  function sv(tag, attrs, kids) {
    var n = document.createElementNS(SVGNS, tag);
    setAttrs(n, attrs);
    append(n, kids);
    return n;
  }
  function setAttrs(n, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) return;
      if (k === 'text') n.textContent = String(v);
      else if (k === 'cls') n.setAttribute('class', v);
      else n.setAttribute(k, String(v));
    });
  }
  function append(n, kids) {
    if (kids === undefined || kids === null) return;
    if (!Array.isArray(kids)) kids = [kids];
    kids.forEach(function (k) {
      if (k === undefined || k === null || k === false) return;
      n.appendChild(typeof k === 'string' || typeof k === 'number' ? document.createTextNode(String(k)) : k);
    });
  }
  function na() { return el('span', { cls: 'na', text: 'n/a' }); }
  function num(v, digits) {
    if (v === null || v === undefined) return null;
    var d = digits === undefined ? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2) : digits;
    return Number(v).toFixed(d).replace(/\\.0+$/, '').replace(/(\\.\\d*[1-9])0+$/, '$1');
  }
  function ago(ts) {
    var s = Math.max(0, Math.round((Date.now() + skew - ts) / 1000));
    if (s < 60) return s + 's ago';
    if (s < 3600) return Math.floor(s / 60) + 'm ago';
    return Math.floor(s / 3600) + 'h ago';
  }

  // ---- charts (hand-rolled SVG) ----
  function sparkline(values, w, h, color) {
    var g = sv('svg', { width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, role: 'img', 'aria-label': 'requests per second' });
    g.appendChild(sv('line', { x1: 0, y1: h - 0.5, x2: w, y2: h - 0.5, stroke: '#2a3542' }));
    if (!values || values.length < 2) {
      g.appendChild(sv('text', { x: 4, y: h / 2 + 3, text: values && values.length ? 'collecting…' : 'no data' }));
      return g;
    }
    var max = Math.max.apply(null, values.concat([1]));
    var step = w / (values.length - 1);
    var pts = values.map(function (v, i) { return [i * step, h - 2 - (v / max) * (h - 6)]; });
    var line = pts.map(function (p) { return p[0].toFixed(1) + ',' + p[1].toFixed(1); }).join(' ');
    g.appendChild(sv('polygon', { points: '0,' + h + ' ' + line + ' ' + w + ',' + h, fill: color, 'fill-opacity': 0.15 }));
    g.appendChild(sv('polyline', { points: line, fill: 'none', stroke: color, 'stroke-width': 1.6, 'stroke-linejoin': 'round' }));
    g.appendChild(sv('text', { x: w - 2, y: 10, 'text-anchor': 'end', text: 'max ' + num(max) }));
    return g;
  }
  function donut(ratio, size) {
    var r = size / 2 - 5, c = 2 * Math.PI * r;
    var g = sv('svg', { width: size, height: size, viewBox: '0 0 ' + size + ' ' + size, role: 'img', 'aria-label': 'cache hit ratio' });
    g.appendChild(sv('circle', { cx: size / 2, cy: size / 2, r: r, fill: 'none', stroke: '#2a3542', 'stroke-width': 7 }));
    if (ratio !== null && ratio !== undefined) {
      g.appendChild(sv('circle', { cx: size / 2, cy: size / 2, r: r, fill: 'none', stroke: '#3fb950', 'stroke-width': 7,
        'stroke-dasharray': (c * ratio).toFixed(2) + ' ' + c.toFixed(2), transform: 'rotate(-90 ' + size / 2 + ' ' + size / 2 + ')',
        'stroke-linecap': ratio > 0 && ratio < 1 ? 'round' : 'butt' }));
    }
    return g;
  }
  // A horizontal bar: value out of max, with optional marker (e.g. configured rate).
  function bar(value, max, color, marker, w) {
    w = w || 280;
    var h = 10;
    var g = sv('svg', { width: '100%', height: h, viewBox: '0 0 ' + w + ' ' + h, preserveAspectRatio: 'none', role: 'img' });
    g.appendChild(sv('rect', { x: 0, y: 0, width: w, height: h, rx: 3, fill: '#2a3542' }));
    if (value !== null && value !== undefined && max > 0) {
      var vw = Math.max(0, Math.min(1, value / max)) * w;
      g.appendChild(sv('rect', { x: 0, y: 0, width: vw.toFixed(1), height: h, rx: 3, fill: color }));
    }
    if (marker !== null && marker !== undefined && max > 0) {
      var mx = Math.max(0, Math.min(1, marker / max)) * w;
      g.appendChild(sv('rect', { x: Math.max(0, mx - 1.5).toFixed(1), y: 0, width: 3, height: h, fill: '#e6edf3' }));
    }
    return g;
  }

  // ---- views ----
  function breakerPill(b) {
    if (!b) return el('span', { cls: 'pill', 'data-field': 'breaker', text: 'breaker n/a' });
    var cls = b === 'closed' ? 'ok' : b === 'open' ? 'bad' : 'warn';
    return el('span', { cls: 'pill ' + cls, 'data-field': 'breaker' }, [el('span', { cls: 'dot' }), 'breaker ' + b]);
  }
  function kpi(label, value, unit, field) {
    return el('div', { cls: 'kpi' }, [
      el('div', { cls: 'label', text: label }),
      el('div', { cls: 'value', 'data-field': field }, value === null ? na() : [value, unit ? el('small', { text: unit }) : null]),
    ]);
  }
  function meter(label, valueText, chart, field) {
    return el('div', { cls: 'meter' }, [
      el('div', { cls: 'head' }, [el('span', { text: label }), el('b', { 'data-field': field }, valueText === null ? na() : valueText)]),
      chart,
    ]);
  }

  function upstreamCard(u) {
    var card = el('section', { cls: 'card' + (u.registered ? '' : ' off'), 'data-upstream': u.name });
    var reach = u.reachable === null ? el('span', { cls: 'pill', text: u.registered ? 'probe n/a' : 'not routed' })
      : el('span', { cls: 'pill ' + (u.reachable ? 'ok' : 'bad'), 'data-field': 'reachable' },
          [el('span', { cls: 'dot' }), u.reachable ? (u.latencyMs !== null ? 'up ' + u.latencyMs + ' ms' : 'up') : 'unreachable']);
    card.appendChild(el('div', { cls: 'top' }, [
      el('span', { cls: 'name', text: u.name }),
      u.sandbox ? el('span', { cls: 'pill warn', text: 'sandbox' }) : null,
      el('span', { cls: 'spacer' }),
      breakerPill(u.breaker),
    ]));
    card.appendChild(el('div', { cls: 'top sub' }, [
      el('span', { cls: 'title', text: u.title || (u.registered ? '' : 'not loaded on this gateway') }),
      el('span', { cls: 'spacer' }),
      reach,
    ]));

    card.appendChild(el('div', { cls: 'row' }, [
      kpi('requests / s', num(u.requestsPerSec), null, 'rps'),
      el('div', { cls: 'spacer' }),
      sparkline(u.history, 150, 40, '#58a6ff'),
    ]));
    var hr = u.hitRatio === null || u.hitRatio === undefined ? null : Math.round(u.hitRatio * 100);
    var cacheNote = u.cache ? (u.cache.hit + u.cache.stale + u.cache.coalesced) + ' hit · ' + u.cache.miss + ' miss' : 'no data';
    card.appendChild(el('div', { cls: 'row' }, [
      donut(hr === null ? null : u.hitRatio, 46),
      el('div', { cls: 'kpi' }, [
        el('div', { cls: 'label', text: 'cache hits' }),
        el('div', { cls: 'value', 'data-field': 'hit-ratio' }, hr === null ? na() : [String(hr), el('small', { text: '%' })]),
      ]),
      el('div', { cls: 'kpi' }, [el('div', { cls: 'label', text: 'last minute' }), el('div', { text: cacheNote })]),
    ]));

    var b = u.budget;
    card.appendChild(meter('budget tokens',
      b.tokens === null ? null : num(b.tokens, 1) + ' / ' + num(b.burst),
      bar(b.tokens, b.burst, '#a371f7'), 'tokens'));
    var rateMax = Math.max(b.configuredRatePerSec, b.learnedRatePerSec || 0) || 1;
    card.appendChild(meter('rate: learned / configured',
      (b.learnedRatePerSec === null ? 'n/a' : num(b.learnedRatePerSec)) + ' / ' + num(b.configuredRatePerSec) + ' req/s',
      bar(b.learnedRatePerSec, rateMax, '#58a6ff', b.configuredRatePerSec), 'rate'));

    var cd = u.cooldownRemainingSeconds;
    var cool = el('div', { cls: 'cool' + (cd > 0 ? ' active' : '') }, [
      el('span', { text: cd > 0 ? 'Cooling down after an upstream 429' : 'Cooldown' }),
      el('b', { 'data-field': 'cooldown' }, cd === null || cd === undefined ? na() : cd > 0 ? Math.ceil(cd) + ' s' : 'none'),
    ]);
    card.appendChild(cool);

    var rl = u.rateLimited;
    if (rl) card.appendChild(el('div', { cls: 'meter' }, [el('div', { cls: 'head' }, [
      el('span', { text: '429s since start (consumer / upstream)' }),
      el('b', { 'data-field': 'rate-limited', text: rl.consumer + ' / ' + rl.upstream }),
    ])]));

    var errs = el('div', { cls: 'errors', 'data-field': 'last-errors' }, [el('h2', { text: 'last errors' })]);
    if (!u.lastErrors.length) errs.appendChild(el('div', { cls: 'none', text: 'none' }));
    u.lastErrors.slice(0, 4).forEach(function (e) {
      errs.appendChild(el('div', { cls: 'err', title: e.message || '' }, [
        el('span', { cls: 'when', text: ago(e.at) }),
        el('span', { cls: 'st' + (e.status >= 500 ? ' s5' : ''), text: String(e.status) }),
        el('span', { cls: 'what' }, [e.code, e.route ? el('i', { text: ' ' + e.route }) : null,
          e.retryAfterSeconds !== undefined ? el('i', { text: ' retry ' + e.retryAfterSeconds + 's' }) : null]),
      ]));
    });
    card.appendChild(errs);
    return card;
  }

  function consumerRow(c) {
    var quota = el('div', {}, c.quota.length ? c.quota.map(function (q) {
      return el('div', { cls: 'quota', 'data-window': q.window }, [
        el('span', { text: q.window }),
        bar(q.used, q.limit, q.used !== null && q.used >= q.limit ? '#f85149' : '#3fb950', null, 150),
        el('span', { cls: 'q' }, q.used === null ? ['n/a of ' + q.limit] : [q.used + ' / ' + q.limit]),
      ]);
    }) : el('span', { cls: 'na', text: 'no quota' }));
    return el('tr', { 'data-consumer': c.id }, [
      el('td', { cls: 'id', text: c.id }),
      el('td', {}, el('div', { cls: 'chips' }, c.upstreams.map(function (u) { return el('span', { cls: 'chip', text: u }); })
        .concat(c.write ? [el('span', { cls: 'chip', text: 'write' })] : []))),
      el('td', { 'data-field': 'rps' }, c.requestsPerSec === null ? na() : num(c.requestsPerSec)),
      el('td', {}, sparkline(c.history, 120, 26, '#3fb950')),
      el('td', {}, quota),
      el('td', { 'data-field': 'rejected', text: c.rejections.rateLimited
        ? c.rejections.rateLimited + ' (' + ago(c.rejections.lastRateLimitedAt) + ')' : '0' }),
    ]);
  }

  function render(s) {
    var inst = s.instance;
    var status = document.getElementById('status');
    status.className = 'pill ' + (inst.status === 'ok' ? 'ok' : inst.status === 'degraded' || inst.status === 'unready' ? 'bad' : '');
    status.textContent = 'ready: ' + inst.status;
    var redis = document.getElementById('redis');
    redis.className = 'pill ' + (inst.redis === 'ok' ? 'ok' : inst.redis === 'down' ? 'bad' : '');
    redis.textContent = 'redis: ' + inst.redis;
    document.getElementById('sandbox').classList.toggle('hidden', !inst.sandbox);
    document.getElementById('instance').textContent = inst.id + ' · up ' + Math.round(inst.uptimeSeconds / 60) + ' min';

    var grid = document.getElementById('upstreams');
    grid.replaceChildren.apply(grid, s.upstreams.map(upstreamCard));
    var body = document.getElementById('consumers');
    body.replaceChildren.apply(body, s.consumers.map(consumerRow));
    var missing = Object.keys(s.metrics).filter(function (k) { return !s.metrics[k]; });
    document.getElementById('foot').textContent = 'Rates over ' + s.windowSeconds + ' s on this instance. ' +
      (missing.length ? 'Not reported by this gateway (shown as n/a): ' + missing.join(', ') + '.' : 'All metric families present.');
  }

  function setUpdated(ok, text) {
    var u = document.getElementById('updated');
    u.className = 'pill ' + (ok ? 'ok' : 'bad');
    u.textContent = text;
  }

  function showLogin(msg) {
    document.getElementById('app').classList.add('hidden');
    document.getElementById('login').classList.remove('hidden');
    document.getElementById('login-msg').textContent = msg || '';
    document.getElementById('token').focus();
  }
  function showApp() {
    document.getElementById('login').classList.add('hidden');
    document.getElementById('app').classList.remove('hidden');
  }

  function schedule() {
    clearTimeout(timer);
    if (!paused) timer = setTimeout(refresh, REFRESH_MS);
  }

  async function refresh() {
    var token = sessionStorage.getItem(KEY);
    if (!token) { showLogin(); return; }
    try {
      var res = await fetch(stateUrl, { headers: { authorization: 'Bearer ' + token, accept: 'application/json' }, cache: 'no-store' });
      if (res.status === 401) { sessionStorage.removeItem(KEY); showLogin('That operator key was not accepted.'); return; }
      if (!res.ok) throw new Error('HTTP ' + res.status);
      var s = await res.json();
      var serverNow = Date.parse(s.generatedAt);
      if (!isNaN(serverNow)) skew = serverNow - Date.now();
      showApp();
      render(s);
      lastOk = Date.now();
      setUpdated(true, 'updated ' + new Date(lastOk).toLocaleTimeString());
    } catch (e) {
      var since = lastOk ? ' · last ok ' + Math.round((Date.now() - lastOk) / 1000) + 's ago' : '';
      setUpdated(false, 'refresh failed: ' + (e && e.message ? e.message : 'error') + since);
    }
    schedule();
  }

  document.getElementById('login-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var v = document.getElementById('token').value.trim();
    if (!v) return;
    sessionStorage.setItem(KEY, v);
    document.getElementById('token').value = '';
    refresh();
  });
  document.getElementById('pause').addEventListener('click', function () {
    paused = !paused;
    this.textContent = paused ? 'Resume' : 'Pause';
    if (!paused) refresh(); else clearTimeout(timer);
  });
  document.getElementById('logout').addEventListener('click', function () {
    sessionStorage.removeItem(KEY);
    clearTimeout(timer);
    showLogin('Signed out.');
  });
  refresh();
})();
`;

const BODY = `
<div id="login" class="login hidden">
  <h1>Atrium operator console</h1>
  <p>Enter the operator key (ATRIUM_OPERATOR_TOKEN). It stays in this tab only.</p>
  <form id="login-form" autocomplete="off">
    <input id="token" type="password" placeholder="operator key" aria-label="operator key" autocomplete="off">
    <button class="primary" type="submit">Open console</button>
  </form>
  <div id="login-msg" class="msg"></div>
</div>
<div id="app" class="hidden">
  <header>
    <h1>Atrium</h1>
    <span id="status" class="pill">ready: …</span>
    <span id="redis" class="pill">redis: …</span>
    <span id="sandbox" class="pill warn hidden">sandbox</span>
    <span id="instance" class="pill"></span>
    <span class="spacer"></span>
    <span id="updated" class="pill">loading…</span>
    <button id="pause" type="button">Pause</button>
    <button id="logout" type="button">Sign out</button>
  </header>
  <main>
    <h2>Upstreams</h2>
    <div id="upstreams" class="grid"></div>
    <div class="section">
      <h2>Consumers</h2>
      <div class="card">
        <table>
          <thead><tr><th>consumer</th><th>interfaces</th><th>req/s</th><th>trend</th><th>quota used</th><th>429s (quota)</th></tr></thead>
          <tbody id="consumers"></tbody>
        </table>
      </div>
    </div>
    <div id="foot" class="foot"></div>
  </main>
</div>
`;

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('base64');

/** The page and its Content-Security-Policy (inline code allowed by hash only), computed once. */
export const CONSOLE_PAGE = {
  html:
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="referrer" content="no-referrer"><title>Atrium operator console</title>' +
    // An empty inline icon: the browser asks the gateway for no /favicon.ico.
    '<link rel="icon" href="data:,">' +
    `<style>${STYLE}</style></head><body>${BODY}<script>${SCRIPT}</script></body></html>`,
  csp: [
    "default-src 'none'",
    `script-src 'sha256-${sha256(SCRIPT)}'`,
    `style-src 'sha256-${sha256(STYLE)}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
} as const;
