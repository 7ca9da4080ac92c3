/* The operator console, part 1 of 4 (the gateway inlines console-dom.js, console-traffic.js,
   console-consumers.js and console.js into console.html in that order, each allowed by its hash in the
   page's Content-Security-Policy): the namespace the parts share, DOM and SVG helpers, hand-rolled charts.
   Classic scripts (not modules). Every node is built with createElement/textContent (never innerHTML), so
   nothing the state carries (error messages, ids) can become markup. */
(function () {
  'use strict';
  // The one global the parts share: each later part reads its helpers from it and adds its own.
  var ns = (window.AtriumConsole = {
    // sessionStorage key of the operator token (the login form sets it, every API call sends it).
    TOKEN_KEY: 'atrium.operatorToken',
    // Read and written by several parts: the server clock minus this laptop's (error times are the
    // server's), the consumer whose keys the rotation panel shows (null: closed), the last state rendered.
    state: { skew: 0, selected: null, lastState: null },
  });
  var SVGNS = 'http://www.w3.org/2000/svg';

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
    var s = Math.max(0, Math.round((Date.now() + ns.state.skew - ts) / 1000));
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

  // ---- small views the cards and tables share ----
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

  Object.assign(ns, {
    el: el,
    sv: sv,
    na: na,
    num: num,
    ago: ago,
    sparkline: sparkline,
    donut: donut,
    bar: bar,
    breakerPill: breakerPill,
    kpi: kpi,
    meter: meter,
  });
})();
