/* The operator console, part 2 of 4 (see console-dom.js): the upstream cards, the views table and the
   vendor usage table. */
(function () {
  'use strict';
  var ns = window.AtriumConsole;
  var el = ns.el,
    na = ns.na,
    num = ns.num,
    ago = ns.ago,
    sparkline = ns.sparkline,
    donut = ns.donut,
    bar = ns.bar,
    breakerPill = ns.breakerPill,
    kpi = ns.kpi,
    meter = ns.meter;

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
          el('div', { cls: 'label', 'data-field': 'hit-ratio-label' }, [
            'cache hits',
            u.hitRatioSince === 'start' ? el('small', { text: ' since start' }) : null,
          ]),
          el(
            'div',
            { cls: 'value', 'data-field': 'hit-ratio' },
            hr !== null
              ? [String(hr), el('small', { text: '%' })]
              : u.cache
                ? el('span', { cls: 'na', text: 'no lookups' })
                : na(),
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

  // ---- most watched resources (GET /watch): this replica's subscribers, the fleet's polls ----
  function watchedRow(w) {
    return el('tr', { 'data-resource': w.resource }, [
      el('td', { cls: 'id', text: w.resource }),
      el('td', { 'data-field': 'subscribers', text: String(w.subscribers) }),
      el('td', { 'data-field': 'subscribersHere', text: String(w.subscribersHere) }),
      el('td', { 'data-field': 'polls', text: String(w.polls) }),
      el('td', { 'data-field': 'polledBy', text: w.polledHere ? 'this replica' : 'another replica' }),
      el('td', {
        'data-field': 'lastChange',
        text: w.lastChange ? new Date(w.lastChange).toLocaleTimeString() : 'none yet',
        title: w.lastChange || '',
      }),
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
  Object.assign(ns, {
    upstreamCard: upstreamCard,
    viewRow: viewRow,
    watchedRow: watchedRow,
    renderUsage: renderUsage,
  });
})();
