/* The operator console: hand-rolled SVG charts, no external fetch but the state API. Every node is built
   with createElement/textContent (never innerHTML), so nothing the state carries (error messages, ids) can
   become markup. A classic script (not a module): the gateway inlines it into console.html, allowed by its
   hash in the page's Content-Security-Policy. */
(function () {
  'use strict';
  var KEY = 'atrium.operatorToken';
  var REFRESH_MS = 2000;
  var SVGNS = 'http://www.w3.org/2000/svg';
  var stateUrl = location.pathname.replace(/\/+$/, '') + '/api/state';
  var usageUrl = location.pathname.replace(/\/+$/, '') + '/api/usage';
  // Consumers and their keys are changed through the admin API, with the same operator key.
  var ADMIN_URL = '/admin/consumers';
  // The consumer whose keys the rotation panel shows (null: closed), and the last state rendered.
  var selected = null;
  var lastState = null;
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
  function na() {
    return el('span', { cls: 'na', text: 'n/a' });
  }
  function num(v, digits) {
    if (v === null || v === undefined) return null;
    var d = digits === undefined ? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2) : digits;
    return Number(v)
      .toFixed(d)
      .replace(/\.0+$/, '')
      .replace(/(\.\d*[1-9])0+$/, '$1');
  }
  function ago(ts) {
    var s = Math.max(0, Math.round((Date.now() + skew - ts) / 1000));
    if (s < 60) return s + 's ago';
    if (s < 3600) return Math.floor(s / 60) + 'm ago';
    return Math.floor(s / 3600) + 'h ago';
  }

  // ---- charts (hand-rolled SVG) ----
  function sparkline(values, w, h, color) {
    var g = sv('svg', {
      width: w,
      height: h,
      viewBox: '0 0 ' + w + ' ' + h,
      role: 'img',
      'aria-label': 'requests per second',
    });
    g.appendChild(sv('line', { x1: 0, y1: h - 0.5, x2: w, y2: h - 0.5, stroke: '#2a3542' }));
    if (!values || values.length < 2) {
      g.appendChild(
        sv('text', { x: 4, y: h / 2 + 3, text: values && values.length ? 'collecting…' : 'no data' }),
      );
      return g;
    }
    var max = Math.max.apply(null, values.concat([1]));
    var step = w / (values.length - 1);
    var pts = values.map(function (v, i) {
      return [i * step, h - 2 - (v / max) * (h - 6)];
    });
    var line = pts
      .map(function (p) {
        return p[0].toFixed(1) + ',' + p[1].toFixed(1);
      })
      .join(' ');
    g.appendChild(
      sv('polygon', { points: '0,' + h + ' ' + line + ' ' + w + ',' + h, fill: color, 'fill-opacity': 0.15 }),
    );
    g.appendChild(
      sv('polyline', {
        points: line,
        fill: 'none',
        stroke: color,
        'stroke-width': 1.6,
        'stroke-linejoin': 'round',
      }),
    );
    g.appendChild(sv('text', { x: w - 2, y: 10, 'text-anchor': 'end', text: 'max ' + num(max) }));
    return g;
  }
  function donut(ratio, size) {
    var r = size / 2 - 5,
      c = 2 * Math.PI * r;
    var g = sv('svg', {
      width: size,
      height: size,
      viewBox: '0 0 ' + size + ' ' + size,
      role: 'img',
      'aria-label': 'cache hit ratio',
    });
    g.appendChild(
      sv('circle', { cx: size / 2, cy: size / 2, r: r, fill: 'none', stroke: '#2a3542', 'stroke-width': 7 }),
    );
    if (ratio !== null && ratio !== undefined) {
      g.appendChild(
        sv('circle', {
          cx: size / 2,
          cy: size / 2,
          r: r,
          fill: 'none',
          stroke: '#3fb950',
          'stroke-width': 7,
          'stroke-dasharray': (c * ratio).toFixed(2) + ' ' + c.toFixed(2),
          transform: 'rotate(-90 ' + size / 2 + ' ' + size / 2 + ')',
          'stroke-linecap': ratio > 0 && ratio < 1 ? 'round' : 'butt',
        }),
      );
    }
    return g;
  }
  // A horizontal bar: value out of max, with optional marker (e.g. configured rate).
  function bar(value, max, color, marker, w) {
    w = w || 280;
    var h = 10;
    var g = sv('svg', {
      width: '100%',
      height: h,
      viewBox: '0 0 ' + w + ' ' + h,
      preserveAspectRatio: 'none',
      role: 'img',
    });
    g.appendChild(sv('rect', { x: 0, y: 0, width: w, height: h, rx: 3, fill: '#2a3542' }));
    if (value !== null && value !== undefined && max > 0) {
      var vw = Math.max(0, Math.min(1, value / max)) * w;
      g.appendChild(sv('rect', { x: 0, y: 0, width: vw.toFixed(1), height: h, rx: 3, fill: color }));
    }
    if (marker !== null && marker !== undefined && max > 0) {
      var mx = Math.max(0, Math.min(1, marker / max)) * w;
      g.appendChild(
        sv('rect', { x: Math.max(0, mx - 1.5).toFixed(1), y: 0, width: 3, height: h, fill: '#e6edf3' }),
      );
    }
    return g;
  }

  // ---- views ----
  function breakerPill(b) {
    if (!b) return el('span', { cls: 'pill', 'data-field': 'breaker', text: 'breaker n/a' });
    var cls = b === 'closed' ? 'ok' : b === 'open' ? 'bad' : 'warn';
    return el('span', { cls: 'pill ' + cls, 'data-field': 'breaker' }, [
      el('span', { cls: 'dot' }),
      'breaker ' + b,
    ]);
  }
  function kpi(label, value, unit, field) {
    return el('div', { cls: 'kpi' }, [
      el('div', { cls: 'label', text: label }),
      el(
        'div',
        { cls: 'value', 'data-field': field },
        value === null ? na() : [value, unit ? el('small', { text: unit }) : null],
      ),
    ]);
  }
  function meter(label, valueText, chart, field) {
    return el('div', { cls: 'meter' }, [
      el('div', { cls: 'head' }, [
        el('span', { text: label }),
        el('b', { 'data-field': field }, valueText === null ? na() : valueText),
      ]),
      chart,
    ]);
  }

  function upstreamCard(u) {
    var card = el('section', { cls: 'card' + (u.registered ? '' : ' off'), 'data-upstream': u.name });
    var reach =
      u.reachable === null
        ? el('span', { cls: 'pill', text: u.registered ? 'probe n/a' : 'not routed' })
        : el('span', { cls: 'pill ' + (u.reachable ? 'ok' : 'bad'), 'data-field': 'reachable' }, [
            el('span', { cls: 'dot' }),
            u.reachable ? (u.latencyMs !== null ? 'up ' + u.latencyMs + ' ms' : 'up') : 'unreachable',
          ]);
    card.appendChild(
      el('div', { cls: 'top' }, [
        el('span', { cls: 'name', text: u.name }),
        u.sandbox ? el('span', { cls: 'pill warn', text: 'sandbox' }) : null,
        el('span', { cls: 'spacer' }),
        breakerPill(u.breaker),
      ]),
    );
    card.appendChild(
      el('div', { cls: 'top sub' }, [
        el('span', { cls: 'title', text: u.title || (u.registered ? '' : 'not loaded on this gateway') }),
        el('span', { cls: 'spacer' }),
        reach,
      ]),
    );

    card.appendChild(
      el('div', { cls: 'row' }, [
        kpi('requests / s', num(u.requestsPerSec), null, 'rps'),
        el('div', { cls: 'spacer' }),
        sparkline(u.history, 150, 40, '#58a6ff'),
      ]),
    );
    var hr = u.hitRatio === null || u.hitRatio === undefined ? null : Math.round(u.hitRatio * 100);
    var cacheNote = u.cache
      ? u.cache.hit + u.cache.stale + u.cache.coalesced + ' hit · ' + u.cache.miss + ' miss'
      : 'no data';
    card.appendChild(
      el('div', { cls: 'row' }, [
        donut(hr === null ? null : u.hitRatio, 46),
        el('div', { cls: 'kpi' }, [
          el('div', { cls: 'label', text: 'cache hits' }),
          el(
            'div',
            { cls: 'value', 'data-field': 'hit-ratio' },
            hr === null ? na() : [String(hr), el('small', { text: '%' })],
          ),
        ]),
        el('div', { cls: 'kpi' }, [
          el('div', { cls: 'label', text: 'last minute' }),
          el('div', { text: cacheNote }),
        ]),
      ]),
    );

    var b = u.budget;
    card.appendChild(
      meter(
        'budget tokens',
        b.tokens === null ? null : num(b.tokens, 1) + ' / ' + num(b.burst),
        bar(b.tokens, b.burst, '#a371f7'),
        'tokens',
      ),
    );
    var rateMax = Math.max(b.configuredRatePerSec, b.learnedRatePerSec || 0) || 1;
    card.appendChild(
      meter(
        'rate: learned / configured',
        (b.learnedRatePerSec === null ? 'n/a' : num(b.learnedRatePerSec)) +
          ' / ' +
          num(b.configuredRatePerSec) +
          ' req/s',
        bar(b.learnedRatePerSec, rateMax, '#58a6ff', b.configuredRatePerSec),
        'rate',
      ),
    );

    var cd = u.cooldownRemainingSeconds;
    var cool = el('div', { cls: 'cool' + (cd > 0 ? ' active' : '') }, [
      el('span', { text: cd > 0 ? 'Cooling down after an upstream 429' : 'Cooldown' }),
      el(
        'b',
        { 'data-field': 'cooldown' },
        cd === null || cd === undefined ? na() : cd > 0 ? Math.ceil(cd) + ' s' : 'none',
      ),
    ]);
    card.appendChild(cool);

    var rl = u.rateLimited;
    if (rl)
      card.appendChild(
        el('div', { cls: 'meter' }, [
          el('div', { cls: 'head' }, [
            el('span', { text: '429s since start (consumer / upstream)' }),
            el('b', { 'data-field': 'rate-limited', text: rl.consumer + ' / ' + rl.upstream }),
          ]),
        ]),
      );

    var errs = el('div', { cls: 'errors', 'data-field': 'last-errors' }, [el('h2', { text: 'last errors' })]);
    if (!u.lastErrors.length) errs.appendChild(el('div', { cls: 'none', text: 'none' }));
    u.lastErrors.slice(0, 4).forEach(function (e) {
      errs.appendChild(
        el('div', { cls: 'err', title: e.message || '' }, [
          el('span', { cls: 'when', text: ago(e.at) }),
          el('span', { cls: 'st' + (e.status >= 500 ? ' s5' : ''), text: String(e.status) }),
          el('span', { cls: 'what' }, [
            e.code,
            e.route ? el('i', { text: ' ' + e.route }) : null,
            e.retryAfterSeconds !== undefined
              ? el('i', { text: ' retry ' + e.retryAfterSeconds + 's' })
              : null,
          ]),
        ]),
      );
    });
    card.appendChild(errs);
    return card;
  }

  function consumerRow(c) {
    var quota = el(
      'div',
      {},
      c.quota.length
        ? c.quota.map(function (q) {
            return el('div', { cls: 'quota', 'data-window': q.window }, [
              el('span', { text: q.window }),
              bar(q.used, q.limit, q.used !== null && q.used >= q.limit ? '#f85149' : '#3fb950', null, 150),
              el('span', { cls: 'q' }, q.used === null ? ['n/a of ' + q.limit] : [q.used + ' / ' + q.limit]),
            ]);
          })
        : el('span', { cls: 'na', text: 'no quota' }),
    );
    return el('tr', { 'data-consumer': c.id }, [
      el('td', { cls: 'id', text: c.id }),
      el(
        'td',
        {},
        el(
          'div',
          { cls: 'chips' },
          c.upstreams
            .map(function (u) {
              return el('span', { cls: 'chip', text: u });
            })
            .concat(c.write ? [el('span', { cls: 'chip', text: 'write' })] : []),
        ),
      ),
      el('td', { 'data-field': 'rps' }, c.requestsPerSec === null ? na() : num(c.requestsPerSec)),
      el('td', {}, sparkline(c.history, 120, 26, '#3fb950')),
      el('td', {}, quota),
      el('td', {
        'data-field': 'rejected',
        text: c.rejections.rateLimited
          ? c.rejections.rateLimited + ' (' + ago(c.rejections.lastRateLimitedAt) + ')'
          : '0',
      }),
      el('td', {}, [
        el('span', {
          cls: 'pill ' + (c.enabled ? 'ok' : 'bad'),
          'data-field': 'state',
          text: c.enabled ? 'enabled' : 'disabled',
        }),
      ]),
      el('td', {}, [
        el('span', { 'data-field': 'keys', text: activeKeys(c).length + ' active ' }),
        keysButton(c.id),
      ]),
    ]);
  }

  function activeKeys(c) {
    return c.keys.filter(function (k) {
      return k.state === 'active';
    });
  }
  function keysButton(id) {
    var b = el('button', { type: 'button', 'data-action': 'rotate', text: 'Keys…' });
    b.addEventListener('click', function () {
      selected = id;
      hideIssued();
      message('');
      if (lastState) renderRotation(lastState);
    });
    return b;
  }

  // ---- key rotation (admin API) ----
  async function admin(method, path) {
    var res = await fetch(ADMIN_URL + path, {
      method: method,
      headers: { authorization: 'Bearer ' + sessionStorage.getItem(KEY), accept: 'application/json' },
      cache: 'no-store',
    });
    var body =
      res.status === 204
        ? null
        : await res.json().catch(function () {
            return null;
          });
    if (!res.ok)
      throw new Error(body && body.error && body.error.message ? body.error.message : 'HTTP ' + res.status);
    return body;
  }
  function message(text, ok) {
    var m = document.getElementById('rotation-msg');
    m.className = 'msg' + (ok ? ' ok' : '');
    m.textContent = text;
  }
  function hideIssued() {
    document.getElementById('issued').classList.add('hidden');
    document.getElementById('issued-key').textContent = '';
  }
  // Runs one admin call, says how it went, and refreshes the state at once.
  function act(method, path, done) {
    message('');
    admin(method, path)
      .then(function (body) {
        if (done) done(body);
        refresh();
      })
      .catch(function (e) {
        message(e.message);
      });
  }
  function renderRotation(s) {
    var panel = document.getElementById('rotation');
    var c =
      selected &&
      s.consumers.filter(function (x) {
        return x.id === selected;
      })[0];
    if (!c) {
      panel.classList.add('hidden');
      return;
    }
    panel.classList.remove('hidden');
    panel.setAttribute('data-rotation', c.id);
    var writable = s.consumerSource && s.consumerSource.writable;
    document.getElementById('rotation-title').textContent = 'Keys of ' + c.id;
    document.getElementById('rotation-note').textContent = writable
      ? 'Rotation: add a new key, give it to the app team, then retire the old key once they use the new one. ' +
        'Both work meanwhile; changes reach every replica within a second.'
      : 'Consumers come from the consumers file on this gateway (no Redis): edit the file to change them ' +
        '(it is reloaded on change and on SIGHUP).';
    var active = activeKeys(c).length;
    document.getElementById('new-key').disabled = !writable;
    var toggle = document.getElementById('toggle-consumer');
    toggle.disabled = !writable;
    toggle.textContent = c.enabled ? 'Disable consumer' : 'Enable consumer';
    var rows = c.keys.map(function (k) {
      var retire = el('button', { type: 'button', 'data-action': 'retire', text: 'Retire' });
      // The last usable key is not retired from here: the consumer would be locked out.
      retire.disabled = !writable || (k.state === 'active' && active <= 1);
      retire.addEventListener('click', function () {
        act('DELETE', '/' + encodeURIComponent(c.id) + '/keys/' + encodeURIComponent(k.id), function () {
          message('Key ' + k.id + ' retired.', true);
        });
      });
      return el('tr', { 'data-key': k.id }, [
        el('td', { cls: 'id', text: k.id }),
        el('td', { text: k.createdAt ? new Date(k.createdAt).toLocaleString() : '—' }),
        el('td', { text: k.expiresAt ? new Date(k.expiresAt).toLocaleString() : 'never' }),
        el('td', { 'data-field': 'key-state', text: k.state }),
        el('td', {}, retire),
      ]);
    });
    var body = document.getElementById('rotation-keys');
    body.replaceChildren.apply(body, rows);
  }

  function viewRow(v) {
    return el('tr', { 'data-view': v.name }, [
      el('td', { cls: 'id', text: v.name, title: v.description + ' ' + v.exampleUrl }),
      el('td', { text: String(v.parts) }),
      el('td', { 'data-field': 'requests', text: String(v.requests) }),
      el('td', { 'data-field': 'complete', text: String(v.complete) }),
      el('td', { 'data-field': 'partial', text: String(v.partial) }),
      el('td', { 'data-field': 'failed', text: String(v.failed) }),
      el('td', { 'data-field': 'notModified', text: String(v.notModified) }),
    ]);
  }

  // ---- vendor usage (issue 16): per consumer and upstream, today and the last 7 days ----
  var USAGE_COLUMNS = [
    ['requests', 'requests'],
    ['cacheAnswers', 'from cache'],
    ['coalesced', 'coalesced'],
    ['vendorCalls', 'vendor calls'],
    ['vendorErrors', 'vendor errors'],
    ['quotaRejections', 'quota 429s'],
    ['shieldRejections', 'shield refusals'],
  ];
  function renderUsage(u) {
    var body = document.getElementById('usage');
    var note = document.getElementById('usage-note');
    if (!u) {
      body.replaceChildren(
        el('tr', {}, el('td', { colspan: 9, cls: 'na', text: 'usage counting is off or unavailable' })),
      );
      note.textContent = '';
      return;
    }
    note.textContent =
      'Today (' +
      u.today +
      ') / last 7 days (from ' +
      u.from +
      '), ' +
      (u.store === 'redis' ? 'whole fleet' : 'this instance') +
      '.';
    if (!u.rows.length) {
      body.replaceChildren(el('tr', {}, el('td', { colspan: 9, cls: 'na', text: 'no usage yet' })));
      return;
    }
    body.replaceChildren.apply(
      body,
      u.rows.map(function (r) {
        return el(
          'tr',
          { 'data-usage': r.consumer + '/' + r.upstream },
          [el('td', { cls: 'id', text: r.consumer }), el('td', { text: r.upstream })].concat(
            USAGE_COLUMNS.map(function (c) {
              return el('td', { 'data-field': c[0], text: num(r.today[c[0]]) + ' / ' + num(r.week[c[0]]) });
            }),
          ),
        );
      }),
    );
  }
  async function refreshUsage(token) {
    try {
      var res = await fetch(usageUrl, {
        headers: { authorization: 'Bearer ' + token, accept: 'application/json' },
        cache: 'no-store',
      });
      if (res.ok) renderUsage((await res.json()).usage);
    } catch {
      // The state refresh reports failures; the usage table keeps its last figures.
    }
  }

  function render(s) {
    var inst = s.instance;
    var status = document.getElementById('status');
    status.className =
      'pill ' +
      (inst.status === 'ok' ? 'ok' : inst.status === 'degraded' || inst.status === 'unready' ? 'bad' : '');
    status.textContent = 'ready: ' + inst.status;
    var redis = document.getElementById('redis');
    redis.className = 'pill ' + (inst.redis === 'ok' ? 'ok' : inst.redis === 'down' ? 'bad' : '');
    redis.textContent = 'redis: ' + inst.redis;
    document.getElementById('sandbox').classList.toggle('hidden', !inst.sandbox);
    document.getElementById('instance').textContent =
      inst.id + ' · up ' + Math.round(inst.uptimeSeconds / 60) + ' min';

    var grid = document.getElementById('upstreams');
    grid.replaceChildren.apply(grid, s.upstreams.map(upstreamCard));
    var body = document.getElementById('consumers');
    body.replaceChildren.apply(body, s.consumers.map(consumerRow));
    lastState = s;
    renderRotation(s);
    var views = document.getElementById('views');
    views.replaceChildren.apply(
      views,
      s.views.length
        ? s.views.map(viewRow)
        : [el('tr', {}, el('td', { cls: 'na', text: 'no views (ATRIUM_VIEWS_FILE)' }))],
    );
    var missing = Object.keys(s.metrics).filter(function (k) {
      return !s.metrics[k];
    });
    document.getElementById('foot').textContent =
      'Rates over ' +
      s.windowSeconds +
      ' s on this instance. ' +
      (missing.length
        ? 'Not reported by this gateway (shown as n/a): ' + missing.join(', ') + '.'
        : 'All metric families present.');
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
    if (!token) {
      showLogin();
      return;
    }
    try {
      var res = await fetch(stateUrl, {
        headers: { authorization: 'Bearer ' + token, accept: 'application/json' },
        cache: 'no-store',
      });
      if (res.status === 401) {
        sessionStorage.removeItem(KEY);
        showLogin('That operator key was not accepted.');
        return;
      }
      if (!res.ok) throw new Error('HTTP ' + res.status);
      var s = await res.json();
      var serverNow = Date.parse(s.generatedAt);
      if (!isNaN(serverNow)) skew = serverNow - Date.now();
      showApp();
      render(s);
      await refreshUsage(token);
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
  document.getElementById('new-key').addEventListener('click', function () {
    var id = selected;
    if (!id) return;
    act('POST', '/' + encodeURIComponent(id) + '/keys', function (body) {
      document.getElementById('issued-for').textContent = id;
      document.getElementById('issued-key').textContent = body.key;
      document.getElementById('issued').classList.remove('hidden');
    });
  });
  document.getElementById('toggle-consumer').addEventListener('click', function () {
    var c =
      lastState &&
      lastState.consumers.filter(function (x) {
        return x.id === selected;
      })[0];
    if (!c) return;
    act('POST', '/' + encodeURIComponent(c.id) + (c.enabled ? '/disable' : '/enable'));
  });
  document.getElementById('close-rotation').addEventListener('click', function () {
    selected = null;
    hideIssued();
    message('');
    document.getElementById('rotation').classList.add('hidden');
  });
  document.getElementById('hide-issued').addEventListener('click', hideIssued);
  document.getElementById('pause').addEventListener('click', function () {
    paused = !paused;
    this.textContent = paused ? 'Resume' : 'Pause';
    if (!paused) refresh();
    else clearTimeout(timer);
  });
  document.getElementById('logout').addEventListener('click', function () {
    sessionStorage.removeItem(KEY);
    clearTimeout(timer);
    selected = null;
    hideIssued();
    showLogin('Signed out.');
  });
  refresh();
})();
