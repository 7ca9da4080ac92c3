import type { ScenarioSummary } from './report.js';

const COLORS: Record<string, string> = {
  ceiling: '#7f8c8d',
  bare: '#2e86de',
  naive: '#e67e22',
  atrium: '#27ae60',
  nginx: '#c0392b',
};

function colorOf(server: string): string {
  return COLORS[server.split('-')[0]] ?? '#555';
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function fmt(v: number, digits = 0): string {
  return Number.isFinite(v)
    ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';
}

interface Panel {
  title: string;
  value: (s: ScenarioSummary) => number;
  label: (s: ScenarioSummary) => string;
}

/**
 * A hand-written SVG: one row per scenario, three bar panels (req/s, p99 latency, server CPU per request),
 * each bar labelled with its value and its ratio to the ceiling of the same run.
 */
export function renderChart(scenarios: ScenarioSummary[], subtitle: string): string {
  const panels: Panel[] = [
    {
      title: 'req/s (higher is better)',
      value: (s) => s.median.reqPerSec,
      label: (s) => `${fmt(s.median.reqPerSec)}  (${fmt(s.ratioToCeiling.reqPerSec, 2)}×)`,
    },
    {
      title: 'p99 latency, ms (lower is better)',
      value: (s) => s.median.p99Ms,
      label: (s) => `${fmt(s.median.p99Ms, 1)}`,
    },
    {
      title: 'server CPU µs per request (lower is better)',
      value: (s) => s.median.cpuUsPerReq,
      label: (s) => `${fmt(s.median.cpuUsPerReq, 0)}  (${fmt(s.ratioToCeiling.cpuUsPerReq, 1)}×)`,
    },
  ];
  const labelW = 250;
  const panelW = 250;
  const gap = 20;
  const rowH = 22;
  const top = 70;
  const width = labelW + panels.length * (panelW + gap) + 10;
  const height = top + scenarios.length * rowH + 40;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">Atrium vs the ceiling, a bare proxy, a naive Nest proxy and nginx proxy_cache (medians)</text>`,
    `<text x="10" y="40" fill="#555">${esc(subtitle)}</text>`,
  );
  panels.forEach((p, pi) => {
    const x0 = labelW + pi * (panelW + gap);
    const max = Math.max(1e-9, ...scenarios.map((s) => p.value(s)).filter(Number.isFinite));
    const barMax = panelW - 95;
    out.push(`<text x="${x0}" y="${top - 10}" font-weight="bold">${esc(p.title)}</text>`);
    out.push(
      `<line x1="${x0}" y1="${top - 4}" x2="${x0}" y2="${top + scenarios.length * rowH}" stroke="#bbb"/>`,
    );
    scenarios.forEach((s, i) => {
      const y = top + i * rowH;
      const v = p.value(s);
      const w = Number.isFinite(v) ? Math.max(1, (v / max) * barMax) : 0;
      out.push(
        `<rect x="${x0}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 7}" fill="${colorOf(s.server)}"/>`,
        `<text x="${(x0 + w + 4).toFixed(1)}" y="${y + rowH / 2 + 4}">${esc(p.label(s))}</text>`,
      );
    });
  });
  scenarios.forEach((s, i) => {
    const y = top + i * rowH;
    if (i % 2 === 0)
      out.splice(4, 0, `<rect x="0" y="${y}" width="${width}" height="${rowH}" fill="#f4f6f7"/>`);
    out.push(
      `<text x="${labelW - 8}" y="${y + rowH / 2 + 4}" text-anchor="end">${esc(s.id)}${s.problems.length ? ' (!)' : ''}</text>`,
    );
  });
  const ly = top + scenarios.length * rowH + 22;
  let lx = 10;
  for (const [name, color] of [
    ['ceiling (bare node:http)', COLORS.ceiling],
    ['bare proxy (node:http + undici)', COLORS.bare],
    ['naive Nest proxy', COLORS.naive],
    ['Atrium full stack', COLORS.atrium],
    ['nginx proxy_cache', COLORS.nginx],
  ]) {
    out.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${color}"/>`);
    out.push(`<text x="${lx + 16}" y="${ly}">${esc(name)}</text>`);
    lx += 16 + name.length * 6 + 24;
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
