/* The operator console, part 4 of 4 (see console-dom.js): login, the refresh loop against the state and
   usage APIs, and the page-level render that hands each panel to its part. */
(function () {
  'use strict';
  var ns = window.AtriumConsole;
  var state = ns.state;
  var el = ns.el;
  var REFRESH_MS = 2000;
  var stateUrl = location.pathname.replace(/\/+$/, '') + '/api/state';
  var usageUrl = location.pathname.replace(/\/+$/, '') + '/api/usage';
  var timer = null;
  var paused = false;
  var lastOk = 0;

  async function refreshUsage(token) {
    try {
      var res = await fetch(usageUrl, {
        headers: { authorization: 'Bearer ' + token, accept: 'application/json' },
        cache: 'no-store',
      });
      if (res.ok) ns.renderUsage((await res.json()).usage);
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
    grid.replaceChildren.apply(grid, s.upstreams.map(ns.upstreamCard));
    var body = document.getElementById('consumers');
    body.replaceChildren.apply(body, s.consumers.map(ns.consumerRow));
    state.lastState = s;
    ns.renderRotation(s);
    var views = document.getElementById('views');
    views.replaceChildren.apply(
      views,
      s.views.length
        ? s.views.map(ns.viewRow)
        : [el('tr', {}, el('td', { cls: 'na', text: 'no views (ATRIUM_VIEWS_FILE)' }))],
    );
    var watched = document.getElementById('watched');
    var rows = s.watched ? s.watched.resources : [];
    watched.replaceChildren.apply(
      watched,
      rows.length
        ? rows.map(ns.watchedRow)
        : [
            el(
              'tr',
              {},
              el('td', {
                colspan: 6,
                cls: 'na',
                text:
                  s.watched && s.watched.scope === 'fleet'
                    ? 'nothing watched in the fleet'
                    : 'nothing watched on this replica',
              }),
            ),
          ],
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
    var token = sessionStorage.getItem(ns.TOKEN_KEY);
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
        sessionStorage.removeItem(ns.TOKEN_KEY);
        showLogin('That operator token was not accepted.');
        return;
      }
      if (!res.ok) throw new Error('HTTP ' + res.status);
      var s = await res.json();
      var serverNow = Date.parse(s.generatedAt);
      if (!isNaN(serverNow)) state.skew = serverNow - Date.now();
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
    sessionStorage.setItem(ns.TOKEN_KEY, v);
    document.getElementById('token').value = '';
    refresh();
  });
  document.getElementById('pause').addEventListener('click', function () {
    paused = !paused;
    this.textContent = paused ? 'Resume' : 'Pause';
    if (!paused) refresh();
    else clearTimeout(timer);
  });
  document.getElementById('logout').addEventListener('click', function () {
    sessionStorage.removeItem(ns.TOKEN_KEY);
    clearTimeout(timer);
    state.selected = null;
    ns.hideIssued();
    showLogin('Signed out.');
  });
  // The rotation panel's actions refresh at once through the namespace.
  ns.refresh = refresh;
  refresh();
})();
