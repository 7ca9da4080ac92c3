/* The operator console, part 3 of 4 (see console-dom.js): the consumers table and the key-rotation panel,
   which changes consumers and keys through the admin API with the same operator token. */
(function () {
  'use strict';
  var ns = window.AtriumConsole;
  var state = ns.state;
  var el = ns.el,
    na = ns.na,
    num = ns.num,
    ago = ns.ago,
    sparkline = ns.sparkline,
    bar = ns.bar;
  var ADMIN_URL = '/admin/consumers';

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
        // End-user tokens (OIDC): the browser app signs its users in with this issuer; no key in the page.
        c.tokens
          ? el('div', { cls: 'chips' }, [
              el('span', {
                cls: 'chip tokens',
                'data-field': 'tokens',
                title: 'audience: ' + c.tokens.audience.join(', '),
                text: 'tokens from ' + issuerName(c.tokens.issuer),
              }),
            ])
          : null,
      ]),
    ]);
  }

  // The issuer without its scheme and trailing slash (a host and a path read better in a chip).
  function issuerName(issuer) {
    return issuer.replace(/^https?:\/\//, '').replace(/\/+$/, '');
  }

  function activeKeys(c) {
    return c.keys.filter(function (k) {
      return k.state === 'active';
    });
  }
  function keysButton(id) {
    var b = el('button', { type: 'button', 'data-action': 'rotate', text: 'Keys…' });
    b.addEventListener('click', function () {
      state.selected = id;
      hideIssued();
      message('');
      if (state.lastState) renderRotation(state.lastState);
    });
    return b;
  }

  // ---- key rotation (admin API) ----
  async function admin(method, path) {
    var res = await fetch(ADMIN_URL + path, {
      method: method,
      headers: {
        authorization: 'Bearer ' + sessionStorage.getItem(ns.TOKEN_KEY),
        accept: 'application/json',
      },
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
        ns.refresh();
      })
      .catch(function (e) {
        message(e.message);
      });
  }
  function renderRotation(s) {
    var panel = document.getElementById('rotation');
    var c =
      state.selected &&
      s.consumers.filter(function (x) {
        return x.id === state.selected;
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

  document.getElementById('new-key').addEventListener('click', function () {
    var id = state.selected;
    if (!id) return;
    act('POST', '/' + encodeURIComponent(id) + '/keys', function (body) {
      document.getElementById('issued-for').textContent = id;
      document.getElementById('issued-key').textContent = body.key;
      document.getElementById('issued').classList.remove('hidden');
    });
  });
  document.getElementById('toggle-consumer').addEventListener('click', function () {
    var c =
      state.lastState &&
      state.lastState.consumers.filter(function (x) {
        return x.id === state.selected;
      })[0];
    if (!c) return;
    act('POST', '/' + encodeURIComponent(c.id) + (c.enabled ? '/disable' : '/enable'));
  });
  document.getElementById('close-rotation').addEventListener('click', function () {
    state.selected = null;
    hideIssued();
    message('');
    document.getElementById('rotation').classList.add('hidden');
  });
  document.getElementById('hide-issued').addEventListener('click', hideIssued);
  Object.assign(ns, { consumerRow: consumerRow, renderRotation: renderRotation, hideIssued: hideIssued });
})();
