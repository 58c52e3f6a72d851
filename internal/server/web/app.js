// The optimize dashboard: a study list, a study page, a trial page and a
// comparison of studies, drawn as SVG from the JSON API (the same
// documents the CLI prints with --output json). Every string from storage
// reaches the page as a text node, never as markup. A running study's page
// refreshes itself every two seconds.
'use strict';

const view = document.getElementById('view');
const statusLine = document.getElementById('status');
const SVGNS = 'http://www.w3.org/2000/svg';
let refresh = null;

// ---- small helpers -------------------------------------------------------

// The server embeds the first view's documents in the page (so that it is
// drawn before the page's load event, even by a headless browser dumping
// the DOM); api answers from them once, then from the network.
const preload = (() => {
  const node = document.getElementById('preload');
  return node ? JSON.parse(node.textContent) : {};
})();

async function api(path) {
  if (path in preload) {
    const body = preload[path];
    delete preload[path];
    return body;
  }
  const res = await fetch('/api/' + path, { headers: { Accept: 'application/json' } });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

// el builds an HTML element; strings among the children become text.
function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'on') for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else if (k === 'style') node.style.cssText = v; // a style attribute would break the content security policy
    else if (v !== undefined && v !== null) node.setAttribute(k, v);
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    node.append(kid instanceof Node ? kid : String(kid));
  }
  return node;
}

// sv builds an SVG element.
function sv(tag, attrs, ...kids) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, v);
  for (const kid of kids.flat()) if (kid) node.append(kid instanceof Node ? kid : String(kid));
  return node;
}

const pct = (d) => (d === null || d === undefined || !isFinite(d)) ? '–' : (d >= 0 ? '+' : '') + (100 * d).toFixed(1) + '%';
const num = (v) => (v === null || v === undefined || !isFinite(v)) ? '–' : Math.abs(v) >= 1e4 ? v.toExponential(3) : +v.toPrecision(4) + '';
const enc = encodeURIComponent;

function card(title, ...body) {
  return el('section', { class: 'card' }, el('h2', {}, title), ...body);
}

// ---- charts --------------------------------------------------------------

function scale(d0, d1, r0, r1) {
  if (!(d1 > d0)) { d0 -= 1; d1 += 1; }
  const f = (v) => r0 + (v - d0) / (d1 - d0) * (r1 - r0);
  f.ticks = (n) => {
    const step = Math.pow(10, Math.floor(Math.log10((d1 - d0) / n)));
    const mult = [1, 2, 5, 10].find((m) => (d1 - d0) / (step * m) <= n) || 10;
    const s = step * mult, out = [];
    for (let t = Math.ceil(d0 / s) * s; t <= d1 + 1e-12; t += s) out.push(+t.toPrecision(12));
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

// frame draws axes and returns the scales and a group to draw into.
function frame(id, xDomain, yDomain, xLabel, yLabel, width, height) {
  const W = width || 620, H = height || 300, m = { l: 64, r: 16, t: 10, b: 40 };
  const x = scale(xDomain[0], xDomain[1], m.l, W - m.r);
  const y = scale(yDomain[0], yDomain[1], H - m.b, m.t);
  const svg = sv('svg', { id, width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img' });
  const axis = sv('g', { class: 'axis' });
  axis.append(sv('line', { x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }), sv('line', { x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }));
  for (const t of x.ticks(8)) axis.append(sv('text', { x: x(t), y: H - m.b + 14, 'text-anchor': 'middle' }, num(t)));
  for (const t of y.ticks(6)) {
    axis.append(sv('line', { x1: m.l, x2: W - m.r, y1: y(t), y2: y(t), opacity: 0.35 }));
    axis.append(sv('text', { x: m.l - 6, y: y(t) + 4, 'text-anchor': 'end' }, num(t)));
  }
  axis.append(sv('text', { x: (m.l + W - m.r) / 2, y: H - 6, 'text-anchor': 'middle' }, xLabel));
  axis.append(sv('text', { x: 12, y: (m.t + H - m.b) / 2, transform: `rotate(-90 12 ${(m.t + H - m.b) / 2})`, 'text-anchor': 'middle' }, yLabel));
  const plot = sv('g', {});
  svg.append(axis, plot);
  return { svg, plot, x, y, W, H, m };
}

const line = (pts, attrs) => sv('polyline', Object.assign({ points: pts.map((p) => p.join(',')).join(' '), fill: 'none' }, attrs));

// colour maps t in [0,1] from blue (good) to orange (bad).
function colour(t) {
  t = Math.min(1, Math.max(0, t));
  const a = [47, 111, 237], b = [230, 126, 34];
  return `rgb(${a.map((v, i) => Math.round(v + (b[i] - v) * t)).join(',')})`;
}

function historyChart(h) {
  const p = h.objectives.indexOf(h.primary);
  const vals = h.trials.map((t) => t.objectives[p]);
  const f = frame('history', extent(h.trials.map((t) => t.trial).concat([0])), extent(vals.concat([h.baseline[p]])), 'trial', h.primary);
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

function paretoChart(h, xi, yi) {
  const xs = h.trials.map((t) => t.objectives[xi]), ys = h.trials.map((t) => t.objectives[yi]);
  const f = frame('pareto', extent(xs.concat([h.baseline[xi]])), extent(ys.concat([h.baseline[yi]])), h.objectives[xi], h.objectives[yi]);
  const ordered = h.trials.slice().sort((a, b) => a.pareto - b.pareto);
  for (const t of ordered) {
    // Infeasible trials are hollow: never on the front, however good they look.
    f.plot.append(sv('circle', { class: t.pareto ? 'front' : 'other', cx: f.x(t.objectives[xi]), cy: f.y(t.objectives[yi]), r: t.pareto ? 4.5 : 3,
      fill: t.pareto ? '#d4493f' : t.feasible ? '#9aa4b5' : 'none', 'fill-opacity': t.pareto ? 0.9 : 0.4, stroke: t.feasible ? 'none' : '#9aa4b5' },
    sv('title', {}, `trial ${t.trial}${t.feasible ? '' : ' (violates a constraint)'}`)));
  }
  const bx = f.x(h.baseline[xi]), by = f.y(h.baseline[yi]);
  f.plot.append(sv('path', { class: 'baseline', d: `M${bx - 6},${by - 6}L${bx + 6},${by + 6}M${bx - 6},${by + 6}L${bx + 6},${by - 6}`, stroke: '#1d2330', 'stroke-width': 2 }));
  return f.svg;
}

// parallel draws the parameters' axes; each trial is a line coloured by
// its score. Above 600 trials the best 200 and an even sample of the rest
// are drawn, so a study of thousands stays quick to draw.
function parallelChart(tpl, rows) {
  const params = tpl.parameters;
  if (!params.length || !rows.length) return el('p', { class: 'muted' }, 'no parameters or trials yet');
  let sample = rows.slice().sort((a, b) => a.score - b.score);
  if (sample.length > 600) {
    const rest = sample.slice(200), step = rest.length / 400;
    sample = sample.slice(0, 200).concat(Array.from({ length: 400 }, (_, i) => rest[Math.floor(i * step)]));
  }
  const W = Math.max(620, params.length * 130), H = 300, m = { l: 50, r: 90, t: 24, b: 30 };
  const svg = sv('svg', { id: 'parallel', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  const xAt = (i) => m.l + i * (W - m.l - m.r) / Math.max(1, params.length - 1);
  const axes = params.map((p, i) => {
    if (p.type === 'categorical') return { p, y: (v) => { const k = p.choices.indexOf(String(v)); return k < 0 ? null : H - m.b - k / Math.max(1, p.choices.length - 1) * (H - m.t - m.b); } };
    const log = p.type === 'log-float', tr = (v) => log ? Math.log(v) : v;
    const s = scale(tr(p.low), tr(p.high), H - m.b, m.t);
    return { p, y: (v) => (v === null || v === undefined) ? null : s(tr(v)) };
  });
  // Colour by rank (sample is sorted by score): one outlier would
  // otherwise give every other line the same colour.
  for (let k = sample.length - 1; k >= 0; k--) {
    const r = sample[k];
    const pts = [];
    axes.forEach((a, i) => { const y = a.y(r[a.p.name]); if (y !== null && isFinite(y)) pts.push([xAt(i), y]); });
    svg.append(line(pts, { stroke: colour(k / Math.max(1, sample.length - 1)), 'stroke-opacity': 0.5, class: 'trialline' }));
  }
  axes.forEach((a, i) => {
    svg.append(sv('line', { x1: xAt(i), x2: xAt(i), y1: m.t, y2: H - m.b, stroke: '#667085' }));
    svg.append(sv('text', { x: xAt(i), y: H - 10, 'text-anchor': i === 0 ? 'start' : i === axes.length - 1 ? 'end' : 'middle' }, a.p.name));
    const lowText = a.p.type === 'categorical' ? a.p.choices[0] : num(a.p.low), highText = a.p.type === 'categorical' ? a.p.choices[a.p.choices.length - 1] : num(a.p.high);
    svg.append(sv('text', { x: xAt(i) + 4, y: H - m.b - 2 }, lowText), sv('text', { x: xAt(i) + 4, y: m.t + 10 }, highText));
  });
  return el('div', {}, svg, el('div', { class: 'legend' }, `${sample.length} of ${rows.length} trials; colour: rank by score (blue best, orange worst)`));
}

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

// ---- views ---------------------------------------------------------------

async function listView() {
  const [list, templates] = await Promise.all([api('studies'), api('templates')]);
  const picked = new Set();
  const rows = list.map((s) => el('tr', {},
    el('td', {}, el('input', { type: 'checkbox', 'aria-label': 'compare ' + s.name, on: { change: (e) => e.target.checked ? picked.add(s.name) : picked.delete(s.name) } })),
    el('td', { class: 'study-name' }, el('a', { href: '/study/' + enc(s.name) }, s.name)),
    el('td', {}, s.template), el('td', {}, el('span', { class: 'pill ' + s.state }, s.state)),
    el('td', { class: 'num' }, `${s.trials_complete}/${s.trials_total}`),
    el('td', { class: 'num ' + (s.best_violates ? 'bad' : (s.minimize ? s.best_delta < 0 : s.best_delta > 0) ? 'good' : '') },
      s.best_delta === undefined ? '–' : `${pct(s.best_delta)} ${s.primary}${s.best_violates ? ' (misses a constraint)' : ''}`)));
  const create = el('form', { class: 'create', on: { submit: createStudy } },
    el('select', { name: 'template' }, templates.map((t) => el('option', { value: t.name }, t.name))),
    el('input', { name: 'trials', type: 'number', value: '40', min: '1', style: 'width:80px' }),
    el('input', { name: 'name', placeholder: 'name (optional)' }),
    el('button', { type: 'submit' }, 'create and run'), el('span', { id: 'create-result' }));
  view.replaceChildren(
    el('h1', {}, 'Studies'), el('div', { class: 'sub' }, `${list.length} in this storage`),
    el('section', { class: 'card wide' },
      list.length ? el('table', { id: 'studies' }, el('tr', {}, el('th', {}, ''), el('th', {}, 'study'), el('th', {}, 'template'), el('th', {}, 'state'), el('th', { class: 'num' }, 'trials'), el('th', { class: 'num' }, 'best Δ (primary)')), rows)
        : el('p', { class: 'muted' }, 'No studies yet.'),
      el('p', {}, el('button', { on: { click: () => { if (picked.size > 1) location.href = '/compare/' + [...picked].map(enc).join(','); } } }, 'compare selected'))),
    el('section', { class: 'card wide', style: 'margin-top:16px' }, el('h2', {}, 'New study'), create));
  if (list.some((s) => s.state === 'running')) refresh = setTimeout(route, 3000);
}

async function createStudy(e) {
  e.preventDefault();
  const f = new FormData(e.target), out = document.getElementById('create-result');
  const body = { template: f.get('template'), trials: +f.get('trials') };
  if (f.get('name')) body.name = f.get('name');
  const res = await fetch('/api/studies', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) { out.textContent = json.error; out.className = 'error'; return; }
  location.href = '/study/' + enc(json.name);
}

async function studyView(name) {
  const show = await api(`studies/${enc(name)}`);
  const [hist, rows, tpl] = await Promise.all([api(`studies/${enc(name)}/history`), api(`studies/${enc(name)}/trials`),
    api('templates/' + enc(show.template))]);
  const objs = hist.objectives;
  const axisPicker = (id, selected) => el('select', { id, on: { change: redrawPareto } }, objs.map((o, i) => el('option', Object.assign({ value: i }, i === selected ? { selected: '' } : {}), o)));
  const paretoBox = el('div', { id: 'pareto-box' });
  function redrawPareto() {
    paretoBox.replaceChildren(paretoChart(hist, +document.getElementById('pareto-x').value, +document.getElementById('pareto-y').value));
  }
  const cards = [
    card('Optimisation history', historyChart(hist)),
    card('Hypervolume history', hypervolumeChart(hist)),
    card('Pareto front', el('div', { class: 'controls' }, 'x', axisPicker('pareto-x', objs.indexOf(hist.primary)), 'y', axisPicker('pareto-y', objs.length > 1 ? (objs.indexOf(hist.primary) === 0 ? 1 : 0) : 0), el('span', {}, 'red: Pareto trials (within the constraints); hollow: violates one; ×: baseline')), paretoBox),
    card('Parameter importance', barsChart('importance', tpl.parameters.map((p) => p.name), tpl.parameters.map((p) => show.importance[p.name] || 0), (v) => v.toFixed(2))),
    Object.assign(card('Parallel coordinates', parallelChart(tpl, rows)), { className: 'card wide' }),
    baselineVsBest(show),
    ...(show.validations || []).map((v) => validationCard(v, hist.primary)),
    show.ablation ? ablationCard(show.ablation, hist.primary) : null,
    show.evidence_runs ? evidenceRunsCard(show.evidence_runs) : null,
    trialsCard(name, rows, objs),
  ].filter(Boolean);
  view.replaceChildren(
    el('h1', {}, show.name),
    el('div', { class: 'sub' }, `template ${show.template} · `, el('span', { class: 'pill ' + show.state }, show.state),
      ` · ${show.trials_complete}/${show.trials_total} trials · hypervolume ${num(show.hypervolume)}`),
    el('div', { class: 'grid' }, cards));
  redrawPareto();
  if (show.state === 'running') refresh = setTimeout(route, 2000);
}

function baselineVsBest(show) {
  if (!show.best) return card('Baseline against the best trial', el('p', { class: 'muted' }, 'no complete trial yet'));
  const b = show.baseline, t = show.best.metrics;
  const rows = [];
  for (const cls of Object.keys(b.per_slo || {})) {
    for (const [label, get] of [['TTFT p99 ms', (m) => m.ttft_ms.p99], ['E2E p99 ms', (m) => m.e2e_ms.p99], ['SLO attainment', (m) => m.attainment]]) {
      const bv = get(b.per_slo[cls]), tv = t.per_slo[cls] ? get(t.per_slo[cls]) : undefined;
      if (bv === undefined || bv === null) continue;
      const d = bv ? (tv - bv) / Math.abs(bv) : null;
      rows.push(el('tr', {}, el('td', {}, cls), el('td', {}, label), el('td', { class: 'num' }, num(bv)), el('td', { class: 'num' }, num(tv)), el('td', { class: 'num' }, pct(d))));
    }
  }
  rows.push(el('tr', {}, el('td', {}, 'all'), el('td', {}, 'tokens/s'), el('td', { class: 'num' }, num(b.tokens_per_sec)), el('td', { class: 'num' }, num(t.tokens_per_sec)), el('td', { class: 'num' }, pct(show.best.deltas.tokens_per_sec))));
  const missed = show.best.violation_sentence ? el('p', { class: 'bad', id: 'best-violates' }, show.best.violation_sentence) : null;
  return card(`Baseline against the best trial (${show.best.trial}) per SLO class`, missed,
    el('table', { id: 'per-class' }, el('tr', {}, ['class', 'metric', 'baseline', 'best', 'Δ'].map((h, i) => el('th', i > 1 ? { class: 'num' } : {}, h))), rows));
}

// ran says when stored evidence last ran, in the reader's time zone.
const ran = (t) => t ? `ran ${new Date(t).toLocaleString()}` : '';

// verdictText is a candidate's verdict as the JSON gives it, with the
// constraint that failed; the rule behind it is the JSON's too (v.verdicts).
const verdictText = (c) => c.failed ? `${c.verdict} (${c.failed} fails)` : c.verdict;

function validationCard(v, primary) {
  const items = [['held-out seeds', v.candidates]].concat((v.regimes || []).map((r) => [r.name, r.candidates]));
  const labels = [], lo = [], hi = [], mid = [], verdicts = [];
  for (const [name, cands] of items) for (const c of cands) {
    const o = c.objectives[primary];
    const n = (v) => (typeof v === 'number' && Number.isFinite(v)) ? v : NaN; // null: too few seeds for an interval
    labels.push(`${name} · trial ${c.trial}`); lo.push(n(o.ci95[0])); hi.push(n(o.ci95[1])); mid.push(n(o.held_out_delta)); verdicts.push(c.verdict);
  }
  const W = 620, row = 24, H = labels.length * row + 36, l = 220;
  const x = scale(Math.min(0, ...lo.filter(Number.isFinite)) * 1.05, Math.max(0, ...hi.filter(Number.isFinite)) * 1.05 + 1e-9, l, W - 20);
  const svg = sv('svg', { id: `validation-${v.kind || 'plain'}`, class: 'validation', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  svg.append(sv('line', { x1: x(0), x2: x(0), y1: 4, y2: H - 24, stroke: '#999', 'stroke-dasharray': '4 3' }));
  labels.forEach((name, i) => {
    const y = 14 + i * row;
    svg.append(sv('text', { x: l - 8, y: y + 4, 'text-anchor': 'end' }, name));
    if (Number.isFinite(lo[i]) && Number.isFinite(hi[i])) svg.append(sv('line', { class: 'ci', x1: x(lo[i]), x2: x(hi[i]), y1: y, y2: y, stroke: '#2f6fed', 'stroke-width': 3 }));
    if (Number.isFinite(mid[i])) svg.append(sv('circle', { cx: x(mid[i]), cy: y, r: 4, fill: '#1d2330' }));
    svg.append(sv('text', { x: W - 16, y: y + 4, 'text-anchor': 'end' }, sv('title', {}, verdicts[i]), pct(mid[i])));
  });
  svg.append(sv('text', { x: (l + W) / 2, y: H - 6, 'text-anchor': 'middle' }, `${primary}: held-out Δ against the baseline, 95% interval`));
  const regimeVerdicts = (v.regimes || []).flatMap((r) => r.candidates.map((c) => el('li', {}, `${r.name}, trial ${c.trial}: ${verdictText(c)}`)));
  return card(`Validation (${v.kind || 'plain'})`,
    el('p', { class: 'muted' }, [ran(v.ran_at), `held-out seeds ${v.seeds.join(', ')}`].filter(Boolean).join(' · ')),
    svg, v.missing ? el('p', { class: 'error' }, `${v.missing} simulations not run yet: run optimize study validate again`) : null,
    el('ul', { class: 'verdicts' }, v.candidates.map((c) => el('li', {}, el('b', {}, `trial ${c.trial}: ${verdictText(c)}`), ` — ${c.detail}`)), regimeVerdicts),
    el('details', {}, el('summary', {}, 'what the verdicts mean'),
      el('ul', {}, (v.verdicts || []).map((r) => el('li', {}, el('b', {}, r.verdict), `: ${r.when}`)))));
}

function ablationCard(a, primary) {
  const names = a.components.map((c) => c.name), values = a.components.map((c) => c.contribution[primary]);
  return card(`Ablation of trial ${a.trial}: contribution to ${primary}`,
    a.ran_at ? el('p', { class: 'muted' }, ran(a.ran_at)) : null,
    barsChart('ablation', names, values, pct),
    a.missing ? el('p', { class: 'error' }, `${a.missing} variants not run yet: run optimize study ablate again`) : null,
    el('p', { class: 'muted' }, `full strategy ${pct(a.full[primary])}; interaction ${pct(a.interaction[primary])}`));
}

// evidenceRunsCard lists every stored validation and ablation request.
function evidenceRunsCard(runs) {
  return card(`Evidence runs (${runs.length}, each kept)`,
    el('table', { id: 'evidence-runs' }, el('tr', {}, ['ran', 'kind', 'trials', 'held-out seeds', 'regimes'].map((h) => el('th', {}, h))),
      runs.slice().reverse().map((r) => el('tr', {}, el('td', {}, new Date(r.ran_at).toLocaleString()), el('td', {}, r.kind),
        el('td', {}, r.trials.join(', ')), el('td', {}, (r.seeds || []).join(', ')), el('td', {}, (r.regimes || []).join(', '))))));
}

function trialsCard(name, rows, objs) {
  const best = rows.slice().sort((a, b) => a.score - b.score).slice(0, 25);
  return Object.assign(card(`Best trials (${best.length} of ${rows.length})`,
    el('table', { id: 'trials' }, el('tr', {}, el('th', {}, 'trial'), objs.map((o) => el('th', { class: 'num' }, o)), el('th', { class: 'num' }, 'score')),
      best.map((r) => el('tr', {}, el('td', {}, el('a', { href: `/trial/${enc(name)}/${r.trial}` }, r.trial)),
        objs.map((o) => el('td', { class: 'num' }, `${num(r[o])} (${pct(r[o + '_delta_pct'] / 100)})`)), el('td', { class: 'num' }, num(r.score)))))),
  { className: 'card wide' });
}

async function trialView(name, n) {
  const t = await api(`studies/${enc(name)}/trials/${enc(n)}`);
  const classes = Object.keys(t.metrics.per_slo || {});
  view.replaceChildren(
    el('h1', {}, `${name} · trial ${t.trial}`), el('div', { class: 'sub' }, el('a', { href: '/study/' + enc(name) }, '← study'), ` · score ${num(t.score)}`),
    el('div', { class: 'grid' },
      card('Parameters', el('table', { id: 'params' }, Object.entries(t.params).map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', { class: 'num' }, v === null ? 'inactive' : String(v)))))),
      card('Objectives', el('table', {}, Object.entries(t.objectives).map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', { class: 'num' }, num(v)), el('td', { class: 'num' }, pct(t.deltas[k])))))),
      Object.assign(card('Every seed, beside the baseline on the same seed',
        el('table', { id: 'seeds' }, el('tr', {}, el('th', {}, 'seed'), classes.map((c) => el('th', { class: 'num' }, `${c} TTFT p99 (baseline)`)), el('th', { class: 'num' }, 'tokens/s (baseline)')),
          t.seeds.map((s) => el('tr', {}, el('td', {}, s.seed),
            classes.map((c) => el('td', { class: 'num' }, `${num(s.metrics.per_slo?.[c]?.ttft_ms?.p99)} (${num(s.baseline.per_slo?.[c]?.ttft_ms?.p99)})`)),
            el('td', { class: 'num' }, `${num(s.metrics.tokens_per_sec)} (${num(s.baseline.tokens_per_sec)})`))))), { className: 'card wide' })));
}

async function compareView(names) {
  const hists = await Promise.all(names.map((n) => api(`studies/${enc(n)}/history`)));
  const palette = ['#2f6fed', '#d4493f', '#1a9c5b', '#c98a16', '#7b4bd1'];
  const maxTrial = Math.max(1, ...hists.map((h) => h.trials.length));
  const best = hists.map((h) => h.trials.map((t, k) => [k + 1, t.best_feasible_ratio]).filter(([, v]) => v !== null));
  const f = frame('compare-history', [0, maxTrial], extent(best.flat().map(([, v]) => v).concat([1])), 'trial (in order)', 'best feasible primary so far / baseline');
  best.forEach((b, i) => f.plot.append(line(b.map(([k, v]) => [f.x(k), f.y(v)]), { stroke: palette[i % palette.length], 'stroke-width': 2 })));
  const ratio = (h, t, k) => h.baseline[k] ? t.objectives[k] / h.baseline[k] : null;
  const pts = hists.map((h) => h.trials.filter((t) => t.pareto).map((t) => [ratio(h, t, 0), ratio(h, t, Math.min(1, h.objectives.length - 1))]));
  const g = frame('compare-pareto', extent(pts.flat().map((p) => p[0]).concat([1])), extent(pts.flat().map((p) => p[1]).concat([1])),
    `${hists[0].objectives[0]} / baseline`, `${hists[0].objectives[Math.min(1, hists[0].objectives.length - 1)]} / baseline`);
  pts.forEach((ps, i) => ps.forEach(([x, y]) => g.plot.append(sv('circle', { cx: g.x(x), cy: g.y(y), r: 4, fill: palette[i % palette.length], 'fill-opacity': 0.8 }))));
  view.replaceChildren(el('h1', {}, 'Comparison'),
    el('div', { class: 'legend' }, names.map((n, i) => el('span', {}, el('span', { class: 'swatch', style: `background:${palette[i % palette.length]}` }), n))),
    el('div', { class: 'grid' }, card('Histories', f.svg), card('Pareto fronts (first two objectives, as ratios to each baseline)', g.svg)));
}

// ---- routing -------------------------------------------------------------

async function route() {
  clearTimeout(refresh);
  const parts = location.pathname.replace(/^\//, '').split('/').map(decodeURIComponent);
  try {
    if (parts[0] === 'study' && parts[1]) await studyView(parts[1]);
    else if (parts[0] === 'trial' && parts[1]) await trialView(parts[1], parts[2]);
    else if (parts[0] === 'compare' && parts[1]) await compareView(parts[1].split(','));
    else await listView();
    statusLine.textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (err) {
    view.replaceChildren(el('p', { class: 'error' }, String(err.message || err)), el('a', { href: '/' }, 'all studies'));
  }
}

route();
