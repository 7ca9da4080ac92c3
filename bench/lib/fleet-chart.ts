// A hand-written SVG like chart.ts: cumulative vendor calls over time for each fleet, the minimum as a line,
// the vendor's cooldown shaded.

export interface FleetSeries {
  readonly label: string;
  readonly color: string;
  /** Call times, ms from the start, ascending. */
  readonly times: readonly number[];
  readonly dashed?: boolean;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const STEPS = 500;

export const FLEET_COLORS = { atrium: '#27ae60', nginx: '#c0392b', minimum: '#555' } as const;

export function renderFleetChart(
  series: readonly FleetSeries[],
  o: { title: string; subtitle: string; endMs: number; cooldownFromMs: number },
): string {
  const W = 900;
  const H = 420;
  const left = 70;
  const right = 20;
  const top = 60;
  const bottom = 70;
  const pw = W - left - right;
  const ph = H - top - bottom;
  const maxY = Math.max(1, ...series.map((s) => s.times.length));
  const x = (ms: number) => left + (Math.min(ms, o.endMs) / o.endMs) * pw;
  const y = (n: number) => top + ph - (n / maxY) * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${esc(o.title)}</text>`,
    `<text x="10" y="40" fill="#555">${esc(o.subtitle)}</text>`,
  ];
  if (o.cooldownFromMs < o.endMs)
    out.push(
      `<rect x="${x(o.cooldownFromMs).toFixed(1)}" y="${top}" width="${(x(o.endMs) - x(o.cooldownFromMs)).toFixed(1)}" height="${ph}" fill="#fdebd0"/>`,
      `<text x="${(x(o.cooldownFromMs) + 4).toFixed(1)}" y="${top + 14}" fill="#a04000">vendor answers 429</text>`,
    );
  // Axes and a few ticks.
  out.push(
    `<line x1="${left}" y1="${top + ph}" x2="${left + pw}" y2="${top + ph}" stroke="#888"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + ph}" stroke="#888"/>`,
  );
  for (let i = 0; i <= 5; i++) {
    const v = Math.round((maxY * i) / 5);
    out.push(
      `<line x1="${left - 4}" y1="${y(v).toFixed(1)}" x2="${left + pw}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`,
      `<text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v.toLocaleString('en-US')}</text>`,
    );
    const t = (o.endMs * i) / 5;
    out.push(
      `<text x="${x(t).toFixed(1)}" y="${top + ph + 16}" text-anchor="middle">${(t / 1000).toFixed(0)} s</text>`,
    );
  }
  out.push(
    `<text x="${left + pw / 2}" y="${top + ph + 34}" text-anchor="middle" fill="#555">time since the traffic started</text>`,
    `<text x="16" y="${top + ph / 2}" transform="rotate(-90 16 ${top + ph / 2})" text-anchor="middle" fill="#555">vendor calls so far</text>`,
  );
  for (const s of series) {
    // The count so far at 500 evenly spaced moments: a few kilobytes whatever the number of calls.
    const pts: string[] = [];
    let seen = 0;
    for (let i = 0; i <= STEPS; i++) {
      const t = (o.endMs * i) / STEPS;
      while (seen < s.times.length && s.times[seen] <= t) seen++;
      pts.push(`${x(t).toFixed(1)},${y(seen).toFixed(1)}`);
    }
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${pts.join(' ')}"/>`,
    );
  }
  let lx = left;
  const ly = H - 14;
  for (const s of series) {
    out.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${lx + 28}" y="${ly}">${esc(s.label)}</text>`,
    );
    lx += 40 + s.label.length * 6;
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
