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
// num is report.Human: four significant digits, plain decimals between
// 0.001 and 10⁹ (17684, 303.3, 0.9973), scientific notation beyond.
const num = (v) => {
  if (v === null || v === undefined || !isFinite(v)) return '–';
  const a = Math.abs(v);
  if (v === 0) return '0';
  if (a < 1e-3 || a >= 1e9) {
    const p = v.toPrecision(4); // 4 significant digits, like Go's %.4g: no trailing zeros
    return p.includes('e') ? p.replace(/\.?0+e/, 'e') : p.replace(/\.?0+$/, '');
  }
  const s = v.toFixed(Math.max(0, 3 - Math.floor(Math.log10(a))));
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
};
// paramText is report's paramText, as study show prints a parameter: Go's
// %.6g (six significant digits, trailing zeros dropped, an exponent of at
// least two digits below 1e-4 and from 1e6), "inactive" for none.
const paramText = (v) => {
  if (v === null || v === undefined) return 'inactive';
  if (typeof v !== 'number') return String(v);
  if (v === 0) return '0';
  const [m, x] = v.toExponential(5).split('e'), e = Number(x);
  if (e < -4 || e >= 6) return m.replace(/\.?0+$/, '') + 'e' + (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
  const s = v.toFixed(5 - e);
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
};
const enc = encodeURIComponent;

// The glossary (GET /api/glossary, the text of `study show --explain`)
// gives the units and the help panel; the page holds no copy of it.
let glossary = { terms: [], units: [], metrics: [] };

// unitOf is a metric path's unit: per_slo.critical.ttft_ms.p99 is listed
// as per_slo.<class>.ttft_ms.<stat>.
function unitOf(path) {
  const forms = [path];
  forms.push(...forms.map((p) => p.replace(/^per_slo\.[^.]+\./, 'per_slo.<class>.')));
  forms.push(...forms.map((p) => p.replace(/\.[^.]+$/, '.<stat>')));
  const m = glossary.metrics.find((x) => forms.includes(x.name));
  return m ? m.unit : '';
}

const withUnit = (label, path) => { const u = unitOf(path); return u ? `${label} (${u})` : label; };
const meaning = (name) => (glossary.terms.find((t) => t.name === name) || {}).meaning;

function glossaryCard() {
  return Object.assign(card('What the numbers mean',
    el('dl', { id: 'glossary' }, glossary.terms.flatMap((t) => [el('dt', {}, t.unit ? `${t.name} (${t.unit})` : t.name), el('dd', {}, t.meaning)])),
    el('table', { id: 'units' }, el('tr', {}, el('th', {}, 'unit'), el('th', {}, 'meaning')), glossary.units.map((u) => el('tr', {}, el('td', {}, u.unit), el('td', {}, u.meaning))))),
  { className: 'card wide' });
}

function card(title, ...body) {
  return el('section', { class: 'card' }, el('h2', {}, title), ...body);
}

// ---- views ---------------------------------------------------------------

async function listView() {
  const [list, templates] = await Promise.all([api('studies'), api('templates')]);
  const picked = new Set();
  const rows = list.map((s) => el('tr', {},
    el('td', {}, el('input', { type: 'checkbox', 'aria-label': 'compare ' + s.name, on: { change: (e) => e.target.checked ? picked.add(s.name) : picked.delete(s.name) } })),
    el('td', { class: 'study-name' }, el('a', { href: '/study/' + enc(s.name) }, s.name)),
    el('td', {}, s.template), el('td', { class: 'world', title: s.world ? s.world.line : '' }, s.world ? s.world.short : '–'),
    el('td', {}, el('span', { class: 'pill ' + s.state }, s.state)),
    el('td', { class: 'num' }, `${s.trials_complete}/${s.trials_total}`),
    el('td', { class: 'num ' + (s.best_violates ? 'bad' : (s.minimize ? s.best_delta < 0 : s.best_delta > 0) ? 'good' : '') },
      s.best_delta === undefined ? '–' : `${pct(s.best_delta)} ${s.primary}${s.best_violates ? ' (misses a constraint)' : ''}`)));
  const create = el('form', { class: 'create', on: { submit: createStudy } },
    el('select', { name: 'template' }, templates.map((t) => el('option', { value: t.name }, t.name))),
    el('input', { name: 'trials', type: 'number', value: '40', min: '1', style: 'width:80px' }),
    el('input', { name: 'name', placeholder: 'name (optional)' }),
    el('label', { title: 'search only what production carries (study create --deployable)' }, el('input', { name: 'deployable', type: 'checkbox' }), ' deployable'),
    el('button', { type: 'submit' }, 'create and run'), el('span', { id: 'create-result' }));
  view.replaceChildren(
    el('h1', {}, 'Studies'), el('div', { class: 'sub' }, `${list.length} in this storage`),
    el('section', { class: 'card wide' },
      list.length ? el('table', { id: 'studies' }, el('tr', {}, el('th', {}, ''), el('th', {}, 'study'), el('th', {}, 'template'), el('th', {}, 'world'), el('th', {}, 'state'), el('th', { class: 'num' }, 'trials'), el('th', { class: 'num' }, 'best Δ (primary)')), rows)
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
  if (f.get('deployable')) body.deployable = true;
  const res = await fetch('/api/studies', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) { out.textContent = json.error; out.className = 'error'; return; }
  location.href = '/study/' + enc(json.name);
}

async function studyView(name) {
  const show = await api(`studies/${enc(name)}`);
  const [hist, rows, tpl, gl] = await Promise.all([api(`studies/${enc(name)}/history`), api(`studies/${enc(name)}/trials`),
    api('templates/' + enc(show.template)), api('glossary')]);
  glossary = gl;
  const objs = hist.objectives;
  // An objective's axis names its unit (critical_ttft_p99 (ms)).
  const objectiveLabel = (o) => withUnit(o, (tpl.objectives.find((x) => x.name === o) || {}).metric || o);
  const axisPicker = (id, selected) => el('select', { id, on: { change: redrawPareto } }, objs.map((o, i) => el('option', Object.assign({ value: i }, i === selected ? { selected: '' } : {}), o)));
  const paretoBox = el('div', { id: 'pareto-box' });
  function redrawPareto() {
    paretoBox.replaceChildren(paretoChart(hist, +document.getElementById('pareto-x').value, +document.getElementById('pareto-y').value, objectiveLabel));
  }
  const parallelBox = el('div', { id: 'parallel-box' });
  function redrawParallel() {
    parallelBox.replaceChildren(parallelChart(tpl, rows, show.importance, document.getElementById('parallel-order').value, show.best));
  }
  // A study without a finished trial has nothing to draw: one card says
  // so (and, when its run stopped on an error, the error says why).
  const finished = show.trials_complete + (show.trials_pruned || 0) > 0;
  const failure = show.failure ? el('div', { class: 'failure', id: 'failure' },
    el('strong', {}, 'Its last run stopped on an error: '), show.failure,
    el('div', { class: 'muted' }, `optimize study resume ${show.name} (or POST /api/studies/${show.name}/resume) runs it on from where it stopped.`)) : null;
  const cards = !finished ? [card('No finished trial', el('p', { id: 'no-trials' },
    show.failure ? 'No trial finished before the run stopped: the error above says why.' : 'No trial has finished yet.')), glossaryCard()] : [
    card('Optimisation history', historyChart(hist, objectiveLabel)),
    card('Hypervolume history', hypervolumeChart(hist)),
    card('Pareto front', el('div', { class: 'controls' }, 'x', axisPicker('pareto-x', objs.indexOf(hist.primary)), 'y', axisPicker('pareto-y', objs.length > 1 ? (objs.indexOf(hist.primary) === 0 ? 1 : 0) : 0), el('span', {}, 'red: Pareto trials (within the constraints); hollow: violates one (beyond the axes: at the edge); ×: baseline')), paretoBox),
    card('Parameter importance', barsChart('importance', tpl.parameters.map((p) => p.name), tpl.parameters.map((p) => show.importance[p.name] || 0), share)),
    Object.assign(card('Parallel coordinates', el('div', { class: 'controls' }, 'parameters',
      el('select', { id: 'parallel-order', on: { change: redrawParallel } }, el('option', { value: 'importance' }, 'by importance'), el('option', { value: 'template' }, 'in template order'))),
    parallelBox), { className: 'card wide' }),
    baselineVsBest(show),
    show.robust ? robustCard(show.robust, objs, hist.primary) : null,
    ...(show.validations || []).map((v) => validationCard(v, hist.primary)),
    show.max_rate ? maxRateCard(show.max_rate) : null,
    show.ablation ? ablationCard(show.ablation, hist.primary) : null,
    show.evidence_runs ? evidenceRunsCard(show.evidence_runs) : null,
    show.tunes_world.length ? paretoWorldsCard(show) : null,
    trialsCard(name, rows, objs, tpl),
    glossaryCard(),
  ].filter(Boolean);
  view.replaceChildren(
    el('h1', {}, show.name),
    el('div', { class: 'sub' }, `template ${show.template} · `, el('span', { class: 'pill ' + show.state }, show.state),
      ` · ${show.trials_complete}/${show.trials_total} trials${show.trials_pruned ? `, ${show.trials_pruned} pruned` : ''} · `, el('span', { title: meaning('hypervolume') }, `hypervolume ${num(show.hypervolume)}`)),
    el('div', { class: 'sub', id: 'world' }, worldText(show)),
    ...(failure ? [failure] : []),
    el('div', { class: 'grid' }, cards));
  if (finished) {
    redrawPareto();
    redrawParallel();
  }
  if (show.state === 'running') refresh = setTimeout(route, 2000);
}

function baselineVsBest(show) {
  if (!show.best) return card('Baseline against the best trial', el('p', { class: 'muted' }, 'no complete trial yet'));
  const b = show.baseline, t = show.best.metrics;
  const rows = [];
  for (const cls of Object.keys(b.per_slo || {})) {
    for (const [label, path, get] of [['TTFT p99', 'ttft_ms.p99', (m) => m.ttft_ms.p99], ['E2E p99', 'e2e_ms.p99', (m) => m.e2e_ms.p99], ['SLO attainment', 'attainment', (m) => m.attainment]]) {
      const bv = get(b.per_slo[cls]), tv = t.per_slo[cls] ? get(t.per_slo[cls]) : undefined;
      if (bv === undefined || bv === null) continue;
      const d = bv ? (tv - bv) / Math.abs(bv) : null;
      rows.push(el('tr', {}, el('td', {}, cls), el('td', {}, label), el('td', {}, unitOf(`per_slo.${cls}.${path}`)), el('td', { class: 'num' }, num(bv)), el('td', { class: 'num' }, num(tv)), el('td', { class: 'num' }, pct(d))));
    }
  }
  rows.push(el('tr', {}, el('td', {}, 'all'), el('td', {}, 'throughput'), el('td', {}, unitOf('tokens_per_sec')), el('td', { class: 'num' }, num(b.tokens_per_sec)), el('td', { class: 'num' }, num(t.tokens_per_sec)), el('td', { class: 'num' }, pct(show.best.deltas.tokens_per_sec))));
  const missed = show.best.violation_sentence ? el('p', { class: 'bad', id: 'best-violates' }, show.best.violation_sentence) : null;
  const world = show.best.world ? el('p', { id: 'best-world' }, `its world: ${show.best.world.line}`) : null;
  return card(`Baseline against the best trial (${show.best.trial}) per SLO class`, missed, world,
    el('table', { id: 'per-class' }, el('tr', {}, ['class', 'metric', 'unit', 'baseline', 'best', 'Δ'].map((h, i) => el('th', i > 2 ? { class: 'num' } : {}, h))), rows));
}

// robustCard is a robust study's best trial in each scenario (regime ×
// world) against that scenario's baseline, and the scenario that binds.
function robustCard(rb, objs, primary) {
  return Object.assign(card(`Trial ${rb.trial} in each scenario (robust study)`,
    el('p', { class: 'muted' }, `${rb.scenarios.length} scenarios, ${rb.simulations_per_trial} simulations per trial; score: the ${rb.aggregate} ratio to each scenario's baseline; every constraint must hold in every scenario`),
    el('table', { id: 'robust' }, el('tr', {}, el('th', {}, 'scenario'), objs.map((o) => el('th', { class: 'num' }, `${o} Δ`)), el('th', {}, 'constraints')),
      rb.scenarios.map((s) => el('tr', s.scenario === rb.binding ? { class: 'binding' } : {}, el('td', {}, s.scenario), objs.map((o) => el('td', { class: 'num' }, pct(s.deltas[o]))),
        el('td', {}, s.missed ? `misses ${s.missed}` : 'met')))),
    el('p', { id: 'robust-binding' }, el('b', {}, `binds: ${rb.binding}`), ` (the worst ${primary})`),
    rb.prune ? el('p', { class: 'muted', id: 'robust-pruning' }, `pruned (--prune): ${rb.pruned} trials stopped once the scenarios they ran proved they could not beat the best; ${rb.simulations} simulations run`) : null),
  { className: 'card wide' });
}

// maxRateCard is the latest validate --max-rate: the sentence (the CLI's,
// rebuilt from its figures) and one row per seed.
function maxRateCard(m) {
  const rate = (r) => (r === null || r === undefined || !isFinite(r)) ? '–' : r >= 100 ? Math.round(r).toLocaleString('en-US') : num(r);
  const bound = (b) => b.rate === 0 ? `< ${rate(b.fails_at)}` : (b.fails_at === null || !isFinite(b.fails_at)) ? `≥ ${rate(b.rate)}` : rate(b.rate);
  const targets = m.targets.map((t) => `${t.metric} ≥ ${t.min}`).join(' and ');
  const seeds = m.per_seed.length - (m.missing || 0);
  return Object.assign(card(`Maximum sustainable rate (trial ${m.trial} and the baseline)`,
    el('p', { class: 'muted' }, [ran(m.ran_at), `bisection on the workload's rate from ${rate(m.start_rate)} ${m.unit} to ${+(100 * m.tolerance).toPrecision(3)}%`].filter(Boolean).join(' · ')),
    m.missing ? el('p', { class: 'error' }, `${m.missing} seeds not searched yet: run optimize study validate --max-rate again`) : null,
    el('p', { id: 'max-rate-summary' }, el('b', {}, `trial ${m.trial} sustains ${rate(m.winner)} ${m.unit}`),
      ` at ${targets}, the baseline ${rate(m.baseline)} (${pct(m.ratio_delta)}, 95% CI [${pct(m.ci95[0])}, ${pct(m.ci95[1])}], ${seeds} seeds)`),
    el('table', { id: 'max-rate' }, el('tr', {}, ['seed', `trial ${m.trial} (${m.unit})`, 'fails at', `baseline (${m.unit})`, 'fails at', 'Δ'].map((h) => el('th', { class: 'num' }, h))),
      m.per_seed.map((s) => el('tr', {}, [s.seed, bound(s.winner), rate(s.winner.fails_at), bound(s.baseline), rate(s.baseline.fails_at),
        pct(s.baseline.rate > 0 ? s.winner.rate / s.baseline.rate - 1 : null)].map((c) => el('td', { class: 'num' }, String(c))))))),
  { className: 'card wide' });
}

// worldText says where the study runs: its baseline's world, and which
// world settings its template tunes (each trial then runs in its own).
function worldText(show) {
  let text = `world ${show.world.line}`;
  if (show.world_assumed) text += ' (stored before studies recorded their world: the seeds\' world, the only one there was)';
  if (show.tunes_world.length) text += ` · the baseline's; the template tunes ${show.tunes_world.join(', ')}: each trial runs in the world its parameters give`;
  if (show.deployable) text += ' · deployable (study create --deployable)';
  return text;
}

// paretoWorldsCard lists the world each Pareto trial ran in, for a
// template that tunes the world: the front is then a choice of clusters.
function paretoWorldsCard(show) {
  const cols = [['trial', (t) => t.trial, true], ['model', (t) => t.world.model], ['GPU', (t) => t.world.gpu], ['TP', (t) => t.world.tp, true],
    ['latency model', (t) => t.world.latency_model], ['instances', (t) => t.world.instances, true], ['KV blocks per instance', (t) => t.world.kv_blocks_per_instance, true]];
  return Object.assign(card(`The Pareto trials' worlds (${show.pareto.length})`,
    el('table', { id: 'pareto-worlds' }, el('tr', {}, cols.map(([h, , n]) => el('th', n ? { class: 'num' } : {}, h))),
      show.pareto.map((t) => el('tr', {}, cols.map(([, get, n]) => el('td', n ? { class: 'num' } : {}, String(get(t)))))))),
  { className: 'card wide' });
}

// ran says when stored evidence last ran, in the reader's time zone.
const ran = (t) => t ? `ran ${new Date(t).toLocaleString()}` : '';

// verdictText is a candidate's verdict as the JSON gives it, with the
// constraint that failed; the rule behind it is the JSON's too (v.verdicts).
const verdictText = (c) => c.failed ? `${c.verdict} (${c.failed} fails)` : c.verdict;

function validationCard(v, primary) {
  // A validation in other worlds (validate --world) has one block per
  // world instead of the study's held-out seeds and regimes.
  const worlds = v.worlds || [];
  const items = [['held-out seeds', v.candidates]].concat((v.regimes || []).map((r) => [r.name, r.candidates]),
    worlds.map((w) => [`world ${w.given.replace('latency.model=', '')}${w.regime ? ' @ ' + w.regime : ''}`, w.candidates]));
  const labels = [], lo = [], hi = [], mid = [], verdicts = [];
  for (const [name, cands] of items) for (const c of cands) {
    const o = c.objectives[primary];
    const n = (v) => (typeof v === 'number' && Number.isFinite(v)) ? v : NaN; // null: too few seeds for an interval
    labels.push(`${name} · trial ${c.trial}`); lo.push(n(o.ci95[0])); hi.push(n(o.ci95[1])); mid.push(n(o.held_out_delta)); verdicts.push(c.verdict);
  }
  // Columns: the labels (to l), the intervals (l to r, with x ticks
  // below), the held-out Δ as text (right of r), so an interval never
  // runs into its label.
  const W = 620, row = 24, l = 210, r = W - 64, top = 6, H = top + labels.length * row + 44;
  const x = scale(Math.min(0, ...lo.filter(Number.isFinite)) * 1.05, Math.max(0, ...hi.filter(Number.isFinite)) * 1.05 + 1e-9, l, r);
  const svg = sv('svg', { id: `validation-${v.kind || 'plain'}`, class: 'validation', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
  const bottom = top + labels.length * row;
  const axis = sv('g', { class: 'axis' }, sv('line', { x1: l, x2: r, y1: bottom, y2: bottom }));
  for (const t of x.ticks(6)) {
    axis.append(sv('line', { x1: x(t), x2: x(t), y1: top, y2: bottom, opacity: 0.35 }));
    axis.append(sv('text', { class: 'tick', x: x(t), y: bottom + 14, 'text-anchor': 'middle' }, (t > 0 ? '+' : '') + +(100 * t).toPrecision(3) + '%'));
  }
  svg.append(axis, sv('line', { x1: x(0), x2: x(0), y1: top, y2: bottom, stroke: '#999', 'stroke-dasharray': '4 3' }));
  labels.forEach((name, i) => {
    const y = top + row / 2 + i * row;
    svg.append(sv('text', { x: l - 8, y: y + 4, 'text-anchor': 'end' }, name));
    if (Number.isFinite(lo[i]) && Number.isFinite(hi[i])) svg.append(sv('line', { class: 'ci', x1: x(lo[i]), x2: x(hi[i]), y1: y, y2: y, stroke: '#2f6fed', 'stroke-width': 3 }));
    if (Number.isFinite(mid[i])) svg.append(sv('circle', { cx: x(mid[i]), cy: y, r: 4, fill: '#1d2330' }));
    svg.append(sv('text', { x: W - 4, y: y + 4, 'text-anchor': 'end' }, sv('title', {}, verdicts[i]), pct(mid[i])));
  });
  svg.append(sv('text', { x: (l + r) / 2, y: H - 6, 'text-anchor': 'middle' }, `${primary}: held-out Δ against the baseline, 95% interval`));
  const regimeVerdicts = (v.regimes || []).flatMap((r) => r.candidates.map((c) => el('li', {}, `${r.name}, trial ${c.trial}: ${verdictText(c)}`)));
  const worldVerdicts = worlds.flatMap((w) => w.candidates.map((c) => el('li', { class: 'world' },
    el('b', {}, `${w.study_world ? 'in a world the study was tuned in' : 'in another world'}${w.regime ? ' at ' + w.regime : ''}, ${w.line}, trial ${c.trial}: ${verdictText(c)}`), ` — ${c.detail}`)));
  return card(`Validation (${v.kind || 'plain'})`,
    el('p', { class: 'muted' }, [ran(v.ran_at), `held-out seeds ${v.seeds.join(', ')}`].filter(Boolean).join(' · ')),
    svg, v.missing ? el('p', { class: 'error' }, `${v.missing} simulations not run yet: run optimize study validate again`) : null,
    el('ul', { class: 'verdicts' }, v.candidates.map((c) => el('li', {}, el('b', {}, `trial ${c.trial}: ${verdictText(c)}`), ` — ${c.detail}`)), regimeVerdicts, worldVerdicts),
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
  return Object.assign(card(`Evidence runs (${runs.length}, each kept)`,
    el('table', { id: 'evidence-runs' }, el('tr', {}, ['ran', 'kind', 'trials', 'held-out seeds', 'regimes or worlds'].map((h) => el('th', {}, h))),
      runs.slice().reverse().map((r) => el('tr', {}, el('td', {}, new Date(r.ran_at).toLocaleString()), el('td', {}, r.kind),
        el('td', {}, r.trials.join(', ')), el('td', {}, (r.seeds || []).join(', ')), el('td', {}, (r.regimes || []).concat(r.worlds || []).join(', '))))),
  ), { className: 'card wide' });
}

function trialsCard(name, rows, objs, tpl) {
  const metricOf = (o) => (tpl.objectives.find((x) => x.name === o) || {}).metric || o;
  const best = rows.slice().sort((a, b) => a.score - b.score).slice(0, 25);
  return Object.assign(card(`Best trials (${best.length} of ${rows.length})`,
    el('table', { id: 'trials' }, el('tr', {}, el('th', {}, 'trial'), objs.map((o) => el('th', { class: 'num' }, withUnit(o, metricOf(o)))), el('th', { class: 'num', title: meaning('score') }, 'score')),
      best.map((r) => el('tr', {}, el('td', {}, el('a', { href: `/trial/${enc(name)}/${r.trial}` }, r.trial)),
        objs.map((o) => el('td', { class: 'num' }, `${num(r[o])} (${pct(r[o + '_delta'])})`)), el('td', { class: 'num' }, num(r.score)))))),
  { className: 'card wide' });
}

async function trialView(name, n) {
  const [t, gl] = await Promise.all([api(`studies/${enc(name)}/trials/${enc(n)}`), api('glossary')]);
  glossary = gl;
  const classes = Object.keys(t.metrics.per_slo || {});
  view.replaceChildren(
    el('h1', {}, `${name} · trial ${t.trial}`), el('div', { class: 'sub' }, el('a', { href: '/study/' + enc(name) }, '← study'), ` · score ${num(t.score)}`),
    el('div', { class: 'sub', id: 'world' }, `world ${t.world.line}`),
    el('div', { class: 'grid' },
      card('Parameters', el('table', { id: 'params' }, Object.entries(t.params).map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', { class: 'num' }, paramText(v)))))),
      card('Objectives', el('table', {}, Object.entries(t.objectives).map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', { class: 'num' }, num(v)), el('td', { class: 'num' }, pct(t.deltas[k])))))),
      Object.assign(card('Every seed, beside the baseline on the same seed',
        el('table', { id: 'seeds' }, el('tr', {}, el('th', {}, 'seed'), classes.map((c) => el('th', { class: 'num' }, `${c} TTFT p99, ${unitOf(`per_slo.${c}.ttft_ms.p99`)} (baseline)`)), el('th', { class: 'num' }, `throughput, ${unitOf('tokens_per_sec')} (baseline)`)),
          t.seeds.map((s) => el('tr', {}, el('td', {}, s.seed),
            classes.map((c) => el('td', { class: 'num' }, `${num(s.metrics.per_slo?.[c]?.ttft_ms?.p99)} (${num(s.baseline.per_slo?.[c]?.ttft_ms?.p99)})`)),
            el('td', { class: 'num' }, `${num(s.metrics.tokens_per_sec)} (${num(s.baseline.tokens_per_sec)})`))))), { className: 'card wide' })));
}

async function compareView(names) {
  const hists = await Promise.all(names.map((n) => api(`studies/${enc(n)}/history`)));
  const palette = ['#2f6fed', '#d4493f', '#1a9c5b', '#c98a16', '#7b4bd1'];
  const maxTrial = Math.max(1, ...hists.map((h) => h.trials.length));
  const best = hists.map((h) => h.trials.map((t, k) => [k + 1, t.best_feasible_ratio]).filter(([, v]) => v !== null));
  // Ratios are multiplicative: when they span more than a factor of 3 (an
  // early feasible trial 4× the baseline, the later ones at 0.3×) a log
  // axis keeps the later differences between studies visible.
  const ratios = best.flat().map(([, v]) => v).concat([1]), lo = Math.min(...ratios), hi = Math.max(...ratios);
  const yLog = lo > 0 && hi / lo > 3;
  const f = frame('compare-history', [0, maxTrial], yLog ? [lo / 1.1, hi * 1.1] : extent(ratios), 'trial (in order)',
    `best feasible primary so far / baseline${yLog ? ' (log scale)' : ''}`, undefined, undefined, yLog);
  best.forEach((b, i) => f.plot.append(line(b.map(([k, v]) => [f.x(k), f.y(v)]), { stroke: palette[i % palette.length], 'stroke-width': 2 })));
  const ratio = (h, t, k) => h.baseline[k] ? t.objectives[k] / h.baseline[k] : null;
  const pts = hists.map((h) => h.trials.filter((t) => t.pareto).map((t) => [ratio(h, t, 0), ratio(h, t, Math.min(1, h.objectives.length - 1))]));
  const g = frame('compare-pareto', extent(pts.flat().map((p) => p[0]).concat([1])), extent(pts.flat().map((p) => p[1]).concat([1])),
    `${hists[0].objectives[0]} / baseline`, `${hists[0].objectives[Math.min(1, hists[0].objectives.length - 1)]} / baseline`);
  pts.forEach((ps, i) => ps.forEach(([x, y]) => g.plot.append(sv('circle', { cx: g.x(x), cy: g.y(y), r: 4, fill: palette[i % palette.length], 'fill-opacity': 0.8 }))));
  // The numbers the curves end at: each study's baseline and best
  // feasible value of its primary objective, with the change.
  const numbers = el('table', { id: 'compare-numbers' },
    el('tr', {}, ['study', 'trials', 'primary objective', 'baseline', 'best feasible', 'Δ'].map((h, i) => el('th', i === 1 || i > 2 ? { class: 'num' } : {}, h))),
    hists.map((h, i) => {
      const p = Math.max(0, h.objectives.indexOf(h.primary));
      const last = h.trials.filter((t) => t.best_feasible !== null).pop();
      const b = h.baseline[p], v = last ? last.best_feasible : null;
      return el('tr', {}, el('td', {}, el('span', { class: 'swatch', style: `background:${palette[i % palette.length]}` }), ' ', el('a', { href: '/study/' + enc(names[i]) }, names[i])),
        el('td', { class: 'num' }, String(h.trials.length)), el('td', {}, h.primary),
        el('td', { class: 'num' }, num(b)), el('td', { class: 'num' }, num(v)), el('td', { class: 'num' }, pct(v !== null && b ? (v - b) / Math.abs(b) : null)));
    }));
  view.replaceChildren(el('h1', {}, 'Comparison'),
    el('div', { class: 'legend' }, names.map((n, i) => el('span', {}, el('span', { class: 'swatch', style: `background:${palette[i % palette.length]}` }), n))),
    el('div', { class: 'grid' }, Object.assign(card('Numbers', numbers), { className: 'card wide' }), card('Histories', f.svg), card('Pareto fronts (first two objectives, as ratios to each baseline)', g.svg)));
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
