// The dashboard's charts: axes, scales and the SVG drawings of a study
// (history, hypervolume, Pareto front, parallel coordinates, bars), built
// with app.js's helpers (sv, el, num). Loaded before app.js, which draws
// the first view as soon as it runs; nothing here runs until a view calls
// it.
'use strict';

// ---- charts --------------------------------------------------------------

function scale(d0, d1, r0, r1) {
  if (!(d1 > d0)) { d0 -= 1; d1 += 1; }
  const f = (v) => r0 + (v - d0) / (d1 - d0) * (r1 - r0);
  f.ticks = (n) => {
    const step = Math.pow(10, Math.floor(Math.log10((d1 - d0) / n)));
    const mult = [1, 2, 5, 10].find((m) => (d1 - d0) / (step * m) <= n) || 10;
    const s = step * mult, out = [];
    // k·s, not a running sum: a tick at zero is 0, not 5.55e-17.
    for (let k = Math.ceil(d0 / s); k * s <= d1 + 1e-12; k++) out.push(+(k * s).toPrecision(12));
    return out;
  };
  return f;
}

function extent(values, pad) {
  const v = values.filter((x) => x !== null && isFinite(x));
  if (!v.length) return [0, 1];
  let lo = Math.min(...v), hi = Math.max(...v);
  const p = (hi - lo || Math.abs(hi) || 1) * (pad || 0.05);
  return [lo - p, hi + p];
}

// tick is an axis tick's text: short enough to sit beside the axis (no
// exponent: 18000 is "18k", 1500000 "1.5M").
function tick(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
  if (a >= 1e4) return +(v / 1e3).toPrecision(3) + 'k';
  return +v.toPrecision(4) + '';
}

// textWidth estimates the width in px of an 11 px label (digits and
// lower-case letters of system sans-serif fonts are at most 0.62 em).
const textWidth = (s) => 6.8 * String(s).length;

// frame draws axes and returns the scales and a group to draw into. The
// left margin fits the widest y tick beside the rotated y label; with
// yLog the y axis is logarithmic (its domain must be positive).
function frame(id, xDomain, yDomain, xLabel, yLabel, width, height, yLog) {
  const W = width || 620, H = height || 300, m = { l: 64, r: 16, t: 10, b: 40 };
  const ly = yLog ? (v) => Math.log10(v) : (v) => v;
  const yl = scale(ly(yDomain[0]), ly(yDomain[1]), H - m.b, m.t);
  const yTicks = yLog ? logTicks(yDomain[0], yDomain[1]) : yl.ticks(6);
  m.l = Math.max(48, 22 + 8 + textWidth(yTicks.map(tick).reduce((a, b) => a.length > b.length ? a : b, '')) + 8);
  const x = scale(xDomain[0], xDomain[1], m.l, W - m.r);
  const y = (v) => yl(ly(v));
  const svg = sv('svg', { id, width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img' });
  const axis = sv('g', { class: 'axis' });
  axis.append(sv('rect', { class: 'plot-area', x: m.l, y: m.t, width: W - m.r - m.l, height: H - m.b - m.t, fill: 'none', stroke: 'none' }));
  axis.append(sv('line', { x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }), sv('line', { x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }));
  // x ticks 18 px below the axis: a y tick at the axis (its text reaches 7 px below it) and an x tick at the corner stay apart.
  for (const t of x.ticks(8)) axis.append(sv('text', { class: 'tick', x: x(t), y: H - m.b + 18, 'text-anchor': 'middle' }, tick(t)));
  for (const t of yTicks) {
    axis.append(sv('line', { x1: m.l, x2: W - m.r, y1: y(t), y2: y(t), opacity: 0.35 }));
    axis.append(sv('text', { class: 'tick', x: m.l - 6, y: y(t) + 4, 'text-anchor': 'end' }, tick(t)));
  }
  axis.append(sv('text', { x: (m.l + W - m.r) / 2, y: H - 6, 'text-anchor': 'middle' }, xLabel));
  axis.append(sv('text', { x: 14, y: (m.t + H - m.b) / 2, transform: `rotate(-90 14 ${(m.t + H - m.b) / 2})`, 'text-anchor': 'middle' }, yLabel));
  const plot = sv('g', {});
  svg.append(axis, plot);
  return { svg, plot, x, y, W, H, m };
}

// logTicks are 1, 2, 3 and 5 times the powers of ten within [lo, hi]
// (only the powers themselves when that makes more than eight).
function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 3, 5]) { const v = m * Math.pow(10, e); if (v >= lo && v <= hi) out.push([m, +v.toPrecision(12)]); }
  }
  return (out.length > 8 ? out.filter(([m]) => m === 1) : out).map(([, v]) => v);
}

const line = (pts, attrs) => sv('polyline', Object.assign({ points: pts.map((p) => p.join(',')).join(' '), fill: 'none' }, attrs));

// colour maps t in [0,1] from blue (good) to orange (bad).
function colour(t) {
  t = Math.min(1, Math.max(0, t));
  const a = [47, 111, 237], b = [230, 126, 34];
  return `rgb(${a.map((v, i) => Math.round(v + (b[i] - v) * t)).join(',')})`;
}

function historyChart(h, label = (o) => o) {
  const p = h.objectives.indexOf(h.primary);
  const vals = h.trials.map((t) => t.objectives[p]).concat([h.baseline[p]]);
  // log_scale: the values span more than a decade, all positive (the
  // server's rule, as study plot draws it).
  const yDomain = h.log_scale ? [Math.min(...vals) / 1.1, Math.max(...vals) * 1.1] : extent(vals);
  const f = frame('history', extent(h.trials.map((t) => t.trial).concat([0])), yDomain, 'trial',
    label(h.primary) + (h.log_scale ? ' (log scale)' : ''), undefined, undefined, h.log_scale);
  const base = h.baseline[p];
  f.plot.append(sv('line', { x1: f.m.l, x2: f.W - f.m.r, y1: f.y(base), y2: f.y(base), stroke: '#999', 'stroke-dasharray': '4 3' }));
  // The best feasible value so far, as the server computes it (null before the first feasible trial).
  const steps = h.trials.filter((t) => t.best_feasible !== null).map((t) => [f.x(t.trial), f.y(t.best_feasible)]);
  if (steps.length) f.plot.append(line(steps, { stroke: '#1a9c5b', 'stroke-width': 2, class: 'best' }));
  for (const t of h.trials) {
    const attrs = { class: 'trial' + (t.feasible ? '' : ' infeasible'), cx: f.x(t.trial), cy: f.y(t.objectives[p]), r: 3,
      fill: t.feasible ? '#2f6fed' : 'none', stroke: t.feasible ? 'none' : '#d4493f', 'fill-opacity': 0.7 };
    f.plot.append(sv('circle', attrs, sv('title', {}, `trial ${t.trial}: ${num(t.objectives[p])}`)));
  }
  return el('div', {}, f.svg, el('div', { class: 'legend' },
    el('span', {}, el('span', { class: 'swatch', style: 'background:#2f6fed' }), 'trial'),
    el('span', {}, el('span', { class: 'swatch', style: 'border:1px solid #d4493f' }), 'infeasible (a constraint fails)'),
    el('span', {}, el('span', { class: 'swatch', style: 'background:#1a9c5b' }), 'best feasible so far'),
    el('span', {}, '- - baseline')));
}

function hypervolumeChart(h) {
  const hv = h.hypervolume;
  const f = frame('hypervolume', extent(h.trials.map((t) => t.trial)), extent(hv.concat([0])), 'trial', 'hypervolume of the front so far');
  if (hv.length) f.plot.append(line(h.trials.map((t, i) => [f.x(t.trial), f.y(hv[i])]), { stroke: '#2f6fed', 'stroke-width': 2, class: 'hv' }));
  return f.svg;
}

function paretoChart(h, xi, yi, label = (o) => o) {
  // The axes span the trials within the constraints and the baseline (all
  // trials if none is within): a violator may lie orders of magnitude
  // away and flatten the front. Violators beyond the axes sit at the edge.
  const shown = h.trials.some((t) => t.feasible) ? h.trials.filter((t) => t.feasible) : h.trials;
  const xs = shown.map((t) => t.objectives[xi]), ys = shown.map((t) => t.objectives[yi]);
  // 8% of the span on each side leaves room for the baseline's 12-px marker inside the plot area.
  const xd = extent(xs.concat([h.baseline[xi]]), 0.08), yd = extent(ys.concat([h.baseline[yi]]), 0.08);
  const f = frame('pareto', xd, yd, label(h.objectives[xi]), label(h.objectives[yi]));
  const clamp = (v, d) => Math.min(Math.max(v, d[0]), d[1]);
  const ordered = h.trials.slice().sort((a, b) => a.pareto - b.pareto);
  for (const t of ordered) {
    // Infeasible trials are hollow: never on the front, however good they look.
    f.plot.append(sv('circle', { class: t.pareto ? 'front' : 'other', cx: f.x(clamp(t.objectives[xi], xd)), cy: f.y(clamp(t.objectives[yi], yd)), r: t.pareto ? 4.5 : 3,
      fill: t.pareto ? '#d4493f' : t.feasible ? '#9aa4b5' : 'none', 'fill-opacity': t.pareto ? 0.9 : 0.4, stroke: t.feasible ? 'none' : '#9aa4b5' },
    sv('title', {}, `trial ${t.trial}${t.feasible ? '' : ' (violates a constraint)'}`)));
  }
  // A baseline without a value on an axis (null) has no place on the chart: no marker rather than one at 0.
  const bx = f.x(h.baseline[xi]), by = f.y(h.baseline[yi]);
  if (isFinite(h.baseline[xi] ?? NaN) && isFinite(h.baseline[yi] ?? NaN)) {
    f.plot.append(sv('path', { class: 'baseline', d: `M${bx - 6},${by - 6}L${bx + 6},${by + 6}M${bx - 6},${by + 6}L${bx + 6},${by - 6}`, stroke: '#1d2330', 'stroke-width': 2 }));
  }
  return f.svg;
}

// parallel draws one horizontal axis per parameter, a row each (so that
// every name and choice has room however many parameters there are), in
// the order asked: by importance (the largest on top) or the template's;
// each trial is a line down through the rows coloured by its score's
// rank. Above 600 trials the best 200 and an even sample of the rest are
// drawn, so a study of thousands stays quick to draw.
function parallelChart(tpl, rows, importance, order, best) {
  if (!tpl.parameters.length || !rows.length) return el('p', { class: 'muted' }, 'no parameters or trials yet');
  const params = tpl.parameters.slice();
  if (order === 'importance') params.sort((a, b) => (importance[b.name] || 0) - (importance[a.name] || 0));
  let sample = rows.slice().sort((a, b) => a.score - b.score);
  if (sample.length > 600) {
    const rest = sample.slice(200), step = rest.length / 400;
    sample = sample.slice(0, 200).concat(Array.from({ length: 400 }, (_, i) => rest[Math.floor(i * step)]));
  }
  // Row height: a name (11 px) and, above the axis, its values' labels;
  // a chart of a few parameters (capacity's three) gets taller rows, so
  // that its lines do not squash into a strip.
  const W = 1300, rowH = Math.max(34, Math.floor(300 / params.length)), m = { l: 200, r: 24, t: 8, b: 8 }, H = m.t + params.length * rowH + m.b;
  const svg = sv('svg', { id: 'parallel', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  const x0 = m.l, x1 = W - m.r, yAt = (i) => m.t + (i + 0.72) * rowH;
  const axes = params.map((p) => {
    if (p.type === 'categorical') return { p, x: (v) => { const k = p.choices.indexOf(String(v)); return k < 0 ? null : x0 + (p.choices.length > 1 ? k / (p.choices.length - 1) : 0.5) * (x1 - x0); } };
    const log = p.type === 'log-float', tr = (v) => log ? Math.log(v) : v;
    const s = scale(tr(p.low), tr(p.high), x0, x1);
    return { p, x: (v) => (v === null || v === undefined) ? null : s(tr(v)) };
  });
  // Colour by rank (sample is sorted by score): one outlier would
  // otherwise give every other line the same colour. The best is drawn last, on top.
  for (let k = sample.length - 1; k >= 0; k--) {
    const r = sample[k];
    const pts = [];
    axes.forEach((a, i) => { const x = a.x(r[a.p.name]); if (x !== null && isFinite(x)) pts.push([x, yAt(i)]); });
    svg.append(line(pts, { stroke: colour(k / Math.max(1, sample.length - 1)), 'stroke-opacity': 0.45, class: 'trialline' }));
  }
  axes.forEach((a, i) => {
    const y = yAt(i), p = a.p;
    svg.append(sv('line', { x1: x0, x2: x1, y1: y, y2: y, stroke: '#667085' }));
    svg.append(sv('text', { class: 'param-name', x: m.l - 12, y: y + 4, 'text-anchor': 'end' }, p.name));
    // The values' labels sit above the axis: every choice of a categorical
    // at its place, the two ends of a number's range.
    const marks = p.type === 'categorical' ? p.choices.map((c) => [a.x(c), c]) : [[x0, tick(p.low)], [x1, tick(p.high)]];
    marks.forEach(([x, text], k) => svg.append(sv('text', { class: 'param-value', x, y: y - 5,
      'text-anchor': marks.length === 1 ? 'middle' : k === 0 ? 'start' : k === marks.length - 1 ? 'end' : 'middle' }, text)));
  });
  return el('div', {}, svg, el('div', { class: 'legend', id: 'parallel-key' }, `${sample.length} of ${rows.length} trials; one axis per parameter, each its range (low left, high right; a log scale for log-float); inactive parameters skipped; colour: rank by score, orange the worst, blue the best: ${bestText(tpl, rows, best)}`));
}

// bestText names the best trial and its primary objective's value, and
// says whether it meets every constraint (the best by score is the best
// feasible one unless no trial meets them all).
function bestText(tpl, rows, best) {
  if (!best) return 'no complete trial';
  const o = tpl.objectives.find((x) => x.name === tpl.primary) || tpl.objectives[0];
  const row = rows.find((r) => r.trial === best.trial) || {};
  const value = `${o.name} ${num(row[o.name])} ${unitOf(o.metric)}`.trim();
  return best.feasible ? `trial ${best.trial}, the best feasible (${value})` : `trial ${best.trial} (${value}), which misses a constraint: no trial meets them all`;
}

// share is an importance as a percentage with two significant digits, so
// that a bar one can see never reads 0 ("<0.1%" below a thousandth).
const share = (v) => v === 0 ? '0%' : Math.abs(v) < 0.001 ? '<0.1%' : +(100 * v).toPrecision(2) + '%';

function barsChart(id, labels, values, fmt) {
  const W = 620, row = 22, H = labels.length * row + 20, l = 200;
  const max = Math.max(1e-9, ...values.map(Math.abs));
  const zero = values.some((v) => v < 0) ? l + (W - l - 60) / 2 : l;
  const w = (v) => Math.abs(v) / max * (values.some((x) => x < 0) ? (W - l - 60) / 2 : W - l - 60);
  const svg = sv('svg', { id, width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  labels.forEach((name, i) => {
    const v = values[i], y = 8 + i * row;
    svg.append(sv('text', { x: l - 8, y: y + 12, 'text-anchor': 'end' }, name));
    svg.append(sv('rect', { class: 'bar', x: v < 0 ? zero - w(v) : zero, y, width: w(v), height: row - 8, fill: v < 0 ? '#1a9c5b' : '#2f6fed' }));
    svg.append(sv('text', { x: (v < 0 ? zero : zero + w(v)) + 4, y: y + 12 }, fmt(v)));
  });
  return svg;
}
