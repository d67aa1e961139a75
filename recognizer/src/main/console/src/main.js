import { Chart, registerables } from 'chart.js';
import annotationPlugin from 'chartjs-plugin-annotation';
import './style.css';

Chart.register(...registerables, annotationPlugin);

const REFRESH_MS = 2000;
const $ = (sel, root = document) => root.querySelector(sel);
const cards = new Map(); // site -> { el, charts, tradeoffKey, pending }

async function api(path, options = {}) {
  const res = await fetch(path, { credentials: 'same-origin', ...options,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(options.headers || {}) } });
  if (res.status === 401) {
    throw Object.assign(new Error('not logged in'), { status: 401 });
  }
  const text = await res.text();
  const body = text ? JSON.parse(text) : null;
  if (!res.ok) {
    throw Object.assign(new Error((body && (body.error || body.message)) || res.statusText), { status: res.status });
  }
  return body;
}

function fmt(v, digits = 2) {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(digits);
  return String(v);
}

// A noised count as the recognizer estimated it: non-negative, with its approximate 95 % interval.
function est(e, digits = 0) {
  if (!e) return undefined;
  const v = fmt(e.estimate, digits);
  return e.low === undefined ? `≈ ${v}` : `≈ ${v} (95 %: ${fmt(e.low, digits)}–${fmt(e.high, digits)})`;
}

function cell(tr, value, cls) {
  const td = document.createElement('td');
  td.textContent = fmt(value);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function fillTable(tbody, rows, toCells) {
  tbody.replaceChildren(...rows.map((r) => {
    const tr = document.createElement('tr');
    toCells(tr, r);
    return tr;
  }));
}

function showLogin(message) {
  $('#console').hidden = true;
  $('#who').hidden = true;
  $('#login').hidden = false;
  $('#login-error').textContent = message || '';
}

async function start() {
  try {
    const me = await api('/console/api/me');
    $('#login').hidden = true;
    $('#console').hidden = false;
    $('#who').hidden = false;
    $('[data-testid=operator]').textContent = me.operator;
    loggedIn = true;
    refresh();
  } catch (e) {
    showLogin(e.status === 401 ? '' : e.message);
  }
}

$('#login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const res = await fetch('/login', { method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ username: $('#username').value, password: $('#password').value }) });
  if (res.ok) {
    $('#password').value = '';
    start();
  } else {
    showLogin('Wrong operator name or password.');
  }
});

$('#logout').addEventListener('click', async () => {
  clearTimeout(timer);
  loggedIn = false;
  const res = await fetch('/console/api/logout', { method: 'POST', credentials: 'same-origin' });
  showLogin(res.ok ? 'Logged out.' : `Logout failed (${res.status}); close the browser to end the session.`);
});

let timer;
let loggedIn = false;
// The page of the fleet shown: the console fetches only these sites' cards and series (issue 41).
const PAGE = 20;
const view = { offset: 0, filter: '' };

$('#page-prev').addEventListener('click', () => { view.offset = Math.max(0, view.offset - PAGE); refresh(); });
$('#page-next').addEventListener('click', () => { view.offset += PAGE; refresh(); });
$('#site-filter').addEventListener('input', (ev) => { view.filter = ev.target.value; view.offset = 0; refresh(); });

function showPage(overview) {
  const shown = new Set(overview.sites.map((s) => s.site));
  for (const [site, c] of cards) {
    if (!shown.has(site)) {
      Object.values(c.charts).forEach((ch) => ch && ch.destroy());
      c.el.remove();
      cards.delete(site);
    }
  }
  const first = overview.total === 0 ? 0 : overview.offset + 1;
  $('#page-info').textContent = `sites ${first}–${overview.offset + overview.sites.length} of ${overview.total}`;
  $('#page-prev').disabled = overview.offset === 0;
  $('#page-next').disabled = overview.offset + overview.sites.length >= overview.total;
  view.offset = overview.offset;
}
async function refresh() {
  clearTimeout(timer);
  if (!loggedIn) return;
  try {
    const q = new URLSearchParams({ offset: view.offset, limit: PAGE, filter: view.filter });
    const [overview, audit] = await Promise.all([api(`/console/api/overview?${q}`), api('/console/api/audit')]);
    const names = overview.sites.map((s) => s.site).join(',');
    const series = names ? await api(`/console/api/series?sites=${encodeURIComponent(names)}`) : {};
    showPage(overview);
    renderSites(overview, series, audit);
    renderModels(overview.models);
    renderAudit(audit);
  } catch (e) {
    if (e.status === 401) {
      loggedIn = false;
      showLogin('Your session ended; log in again.');
      return;
    }
    console.warn('refresh failed', e);
  }
  if (loggedIn) timer = setTimeout(refresh, REFRESH_MS);
}

function lineChart(canvas, datasets, yTitle) {
  return new Chart(canvas, {
    type: 'line',
    data: { labels: [], datasets: datasets.map((d) => ({ ...d, data: [], pointRadius: 0, tension: 0.2, borderWidth: 2 })) },
    options: { animation: false, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false },
      scales: { y: { beginAtZero: true, title: { display: true, text: yTitle } }, x: { ticks: { maxTicksLimit: 8 } } } },
  });
}

function card(site) {
  if (cards.has(site)) return cards.get(site);
  const el = $('#site-template').content.firstElementChild.cloneNode(true);
  el.dataset.site = site;
  el.dataset.testid = 'site';
  $('.site-name', el).textContent = site;
  $('#sites').appendChild(el);
  const c = {
    el,
    pending: null,
    tradeoffKey: null,
    charts: {
      throughput: lineChart($('canvas.throughput', el), [
        { label: 'frames/s', borderColor: '#2563eb' },
        { label: 'faces/s', borderColor: '#16a34a' },
        { label: 'releases/s', borderColor: '#9333ea' },
        { label: 'records consumed/s', borderColor: '#ea580c' }], 'per second'),
      recognition: lineChart($('canvas.recognition', el), [
        { label: 'identified/s', borderColor: '#16a34a' },
        { label: 'unknown/s', borderColor: '#dc2626' },
        { label: 'unknown rate', borderColor: '#6b7280', borderDash: [4, 3], yAxisID: 'rate' }], 'per second'),
      tradeoff: null,
    },
  };
  c.charts.recognition.options.scales.rate = { position: 'right', min: 0, max: 1, grid: { drawOnChartArea: false },
    title: { display: true, text: 'unknown rate' } };
  $('form.propose', el).addEventListener('submit', (ev) => propose(ev, site, c));
  cards.set(site, c);
  return c;
}

async function propose(ev, site, c) {
  ev.preventDefault();
  const input = $('input[name=epsilon]', c.el);
  const out = $('.proposal-result', c.el);
  const epsilon = Number(input.value);
  try {
    const p = await api(`/console/api/sites/${encodeURIComponent(site)}/epsilon`, {
      method: 'POST', body: JSON.stringify({ epsilon }) });
    c.pending = { source: `control-topic@${p.offset}`, epsilon };
    out.className = 'proposal-result outcome-PENDING';
    out.textContent = `ε ${epsilon} written to the control topic (offset ${p.offset}); waiting for the gateways…`;
    refresh();
  } catch (e) {
    out.className = 'proposal-result bad';
    out.textContent = `Not sent: ${e.message}`;
  }
}

function renderSites(overview, series, audit) {
  for (const s of overview.sites) {
    const c = card(s.site);
    const el = c.el;
    const live = $('.badge.live', el);
    live.textContent = s.live ? 'live' : 'not live';
    live.className = `badge live ${s.live ? 'yes' : 'no'}`;
    const p = s.policy || {};
    const floor = s.floor || {};
    const en = s.enrollment;
    const lk = s.linking;
    const facts = [
      ['mechanism', p.mechanism], ['sensitivity mode', p.mode], ['ε per track', p.epsilonPerTrack],
      ['ε per face (release)', p.epsilonPerRelease], ['budget', p.budget], ['window', p.window],
      ['floor (gateway)', floor.epsilonMin === undefined ? undefined
        : `[${fmt(floor.epsilonMin)}, ${fmt(floor.epsilonMax)}]` + (floor.windowMin ? ` per window ≥ ${floor.windowMin}` : '')],
      ['enrolled images (gateways)', en && en.images],
      ['enrolled ε, largest / cap', en && `${fmt(en.maxComposedEpsilon)} / ${fmt(en.epsilonCap)}`],
      ['enrolled ε, total', en && en.totalComposedEpsilon],
      ['enrollment releases refused by the cap', en && en.refusedReleases],
      ['budget scope', lk && lk.budgetScope],
      ['persons linked today (gateways, noised)', lk && lk.persons !== undefined
        && `${est(lk.linkedPersonsEstimate)} of ${est(lk.personsEstimate)}`
        + ` (ε ${fmt(lk.epsilonPerPersonPerWindow)} per person per window)`],
      ['ε cap per person (policy)', lk && lk.gatewaysLinking > 0 ? p.epsilonPerTrack : undefined],
      ['enrollments', s.recognizer && s.recognizer.enrollments],
      ['identified / unknown', s.recognizer && `${s.recognizer.identified} / ${s.recognizer.unknown}`],
      ['dead letters', s.recognizer && s.recognizer.deadLetters]];
    $('dl.policy', el).replaceChildren(...facts.flatMap(([k, v]) => {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = fmt(v);
      dd.dataset.fact = k;
      return [dt, dd];
    }));
    fillTable($('table.gateways tbody', el), s.gateways, (tr, g) => {
      tr.dataset.gateway = g.gateway;
      cell(tr, g.gateway);
      cell(tr, g.live ? 'yes' : 'no', g.live ? 'ok' : 'bad');
      cell(tr, `${g.reportAgeSeconds} s`);
      cell(tr, g.policyVersion);
      cell(tr, g.policy && g.policy.epsilonPerTrack).dataset.field = 'epsilon';
      cell(tr, g.uplink && g.uplink.spoolDepth);
      cell(tr, g.uplink ? (g.uplink.brokerHealthy ? 'healthy' : 'unreachable') : undefined);
      cell(tr, g.lastChange ? `${g.lastChange.outcome} → ${fmt(g.lastChange.epsilonApplied)}` : undefined);
      const ge = g.enrollment;
      const enrolled = !ge ? undefined : ge.error ? `ledger error: ${ge.error}`
        : `${ge.images} images, ε ${fmt(ge.maxComposedEpsilon)} / ${fmt(ge.epsilonCap)}, ${ge.refusedReleases} refused`;
      cell(tr, enrolled, ge && ge.error ? 'bad' : undefined).dataset.field = 'enrollment';
    });
    fillTable($('table.cameras tbody', el), s.cameras, (tr, cam) => {
      cell(tr, cam.gateway);
      cell(tr, cam.camera);
      const state = cam.stale ? `${cam.state} (last report)` : cam.state;
      const cls = cam.stale ? 'stale' : { LIVE: 'ok', FINISHED: '', CONNECTING: '' }[cam.state] ?? 'bad';
      cell(tr, state, cls).dataset.state = cam.stale ? 'STALE' : cam.state;
      cell(tr, cam.frames);
      const ne = cam.noisedEstimates || {};
      cell(tr, est(ne.seen)).dataset.field = 'seen';
      cell(tr, cam.releases);
      cell(tr, est(ne.withheld)).dataset.field = 'withheld';
      cell(tr, cam.epsilonSpent);
      cell(tr, cam.budgetPolicy);
      cell(tr, cam.lastError);
    });
    renderAnswers(el, s.answers);
    updateSeries(c, series[s.site] || []);
    updateTradeoff(c, s);
    updateProposal(c, s.site, audit);
  }
}

// The site's gallery and the answers read. The gallery's facts are said once; per version and ε
// the answers read, then per identity the answers naming it and the estimate of how many answered
// faces were that person (the recognizer inverts the k-RR channel; clipped to [0, answers]).
function renderAnswers(el, an) {
  const gal = an && an.gallery;
  $('.answer-gallery', el).textContent = !an ? 'No gallery published and no answers read for this site.'
    : (gal ? `Gallery v${gal.version}: C = ${gal.identities} people from ${gal.enrollmentReleases} enrollment releases, `
      + `${gal.threshold === null || gal.threshold === undefined ? 'closed set' : `threshold ${fmt(gal.threshold, 3)}`}`
      + ` (${gal.openSet}). ` : 'No gallery published by this recognizer since it started. ')
      + `${an.answers} answers read.`;
  const tbody = $('table.answers tbody', el);
  const rows = [];
  for (const ch of an ? an.channels : []) {
    const head = document.createElement('tr');
    head.className = 'channel';
    const th = document.createElement('th');
    th.colSpan = 3;
    th.textContent = `gallery v${ch.galleryVersion}, C = ${ch.identities}, ε ${fmt(ch.epsilonPerAnswer, 4)} per answer:`
      + ` ${ch.answers} answers`;
    head.appendChild(th);
    rows.push(head);
    for (const p of ch.perIdentity) {
      const tr = document.createElement('tr');
      tr.dataset.identity = p.label;
      cell(tr, p.label);
      cell(tr, p.released);
      const td = cell(tr, est(p.estimate, 1));
      td.dataset.field = 'estimated';
      td.dataset.estimate = String(p.estimate ? p.estimate.estimate : p.estimated);
      rows.push(tr);
    }
  }
  tbody.replaceChildren(...rows);
}

// The ε advisor: what the answer release is expected to do at each ε for a gallery of this size
// (the answer evaluation's measurements), beside what this site's answers measured.
function renderAdvisor(el, adv, epsilonPerFace) {
  const box = $('.advisor', el);
  box.hidden = !adv;
  if (!adv) return;
  const ex = adv.expected;
  $('.advisor-caption', el).textContent = `ε advisor for the answer release: expected FNIR and FPIR against ε per `
    + `answer, measured by the answer evaluation (${ex.source}) on ${ex.set} (C = ${ex.people}, nearest evaluated to this `
    + `site's C = ${adv.identities}; ${ex.network}, ${ex.rule} calibration for FPIR 1 %, one answer per `
    + `${ex.trackFaces === 1 ? 'face' : ex.trackFaces + '-face track'}, templates ${ex.templates}; FPIR on public strangers `
    + `calibration never saw).`
    + (adv.answerEpsilon ? ` The gallery is calibrated for ε ${fmt(adv.answerEpsilon)}.` : '');
  const here = adv.answerEpsilon || epsilonPerFace;
  const nearest = ex.points.reduce((b, p) => (b === null || Math.abs(Math.log(p.epsilon / here))
    < Math.abs(Math.log(b.epsilon / here)) ? p : b), null);
  fillTable($('table.advisor-table tbody', el), ex.points, (tr, p) => {
    tr.dataset.epsilon = String(p.epsilon);
    if (p === nearest) tr.className = 'current';
    cell(tr, p.epsilon);
    cell(tr, fmt(p.fnir, 3));
    cell(tr, fmt(p.fpir, 4));
    cell(tr, p.seeds);
  });
  const m = adv.measured;
  const u = m && m.unknownShareEstimated;
  $('.advisor-measured', el).textContent = !m ? 'This site: no answers read for this gallery yet.'
    : `This site, measured: ${m.answers} answers at ε ${fmt(m.epsilonPerAnswer, 2)}; ${fmt(100 * m.unknownShareReleased, 1)} %`
      + ` said "unknown"; faces estimated to be nobody in the gallery: ${fmt(100 * u.estimate, 1)} %`
      + (u.low === undefined ? '' : ` (95 %: ${fmt(100 * u.low, 1)}–${fmt(100 * u.high, 1)} %)`)
      + '. Of those, FNIR × enrolled faces are enrolled people missed; the rest are strangers.';
}

function updateSeries(c, samples) {
  const labels = samples.map((x) => new Date(x.at).toLocaleTimeString());
  const t = c.charts.throughput;
  t.data.labels = labels;
  ['framesPerSec', 'facesPerSec', 'releasesPerSec', 'recordsPerSec'].forEach((k, i) => {
    t.data.datasets[i].data = samples.map((x) => x[k]);
  });
  t.update('none');
  const r = c.charts.recognition;
  r.data.labels = labels;
  r.data.datasets[0].data = samples.map((x) => x.identifiedPerSec);
  r.data.datasets[1].data = samples.map((x) => x.unknownPerSec);
  r.data.datasets[2].data = samples.map((x) => {
    const n = x.identifiedPerSec + x.unknownPerSec;
    return n > 0 ? x.unknownPerSec / n : null;
  });
  r.update('none');
}

const COLORS = { lfw5: '#2563eb', orl: '#ea580c' };

async function updateTradeoff(c, s) {
  const p = s.policy;
  if (!p) return;
  // Refetched every 30 s as well: the advisor's measured answer rates change.
  const key = `${p.mechanism}|${p.mode}|${p.epsilonPerRelease}|${Math.floor(Date.now() / 30000)}`;
  if (c.tradeoffKey === key) return;
  c.tradeoffKey = key;
  let t;
  try {
    t = await api(`/console/api/tradeoff/${encodeURIComponent(s.site)}`);
  } catch (e) {
    c.tradeoffKey = null;
    return;
  }
  renderAdvisor(c.el, t.advisor, t.epsilonPerFace);
  const caption = $('.tradeoff-caption', c.el);
  if (!t.tradeoff) {
    caption.textContent = `Privacy–utility trade-off: ${t.message}`;
    return;
  }
  caption.textContent = `Privacy–utility trade-off: ${t.tradeoff.mechanism} ${t.tradeoff.mode}, `
    + `${t.tradeoff.metric} against ε per face (${t.tradeoff.source})`
    + (t.advisor ? ', and the answer release (ε advisor)' : '') + '; the line marks this site\'s ε per face';
  const datasets = t.tradeoff.curves.map((cv) => ({
    label: `vector: ${cv.dataset}`, data: cv.points.map(([x, y]) => ({ x, y })), borderColor: COLORS[cv.dataset] || '#444',
    backgroundColor: COLORS[cv.dataset] || '#444', showLine: true, pointRadius: 3 }));
  if (t.advisor) {
    // The answer family beside the vector's, so the chart compares the two releases.
    const ex = t.advisor.expected;
    [['fnir', 'answer FNIR', '#dc2626', [4, 3]], ['fpir', 'answer FPIR', '#6b7280', [2, 2]]]
      .forEach(([k, label, color, dash]) => datasets.push({ label: `${label}: ${ex.set}, C = ${ex.people}`,
        data: ex.points.map((p) => ({ x: p.epsilon, y: p[k] })), borderColor: color, backgroundColor: color,
        borderDash: dash, showLine: true, pointRadius: 2 }));
  }
  const marker = { type: 'line', xMin: t.epsilonPerFace, xMax: t.epsilonPerFace, borderColor: '#dc2626', borderWidth: 2,
    label: { display: true, content: `this site: ε ${fmt(t.epsilonPerFace)}`, position: 'start' } };
  if (c.charts.tradeoff) c.charts.tradeoff.destroy();
  c.charts.tradeoff = new Chart($('canvas.tradeoff', c.el), {
    type: 'scatter',
    data: { datasets },
    options: { animation: false, maintainAspectRatio: false,
      scales: { x: { type: 'logarithmic', title: { display: true, text: 'ε per face' } },
        y: { min: 0, max: 1, title: { display: true, text: t.tradeoff.metric } } },
      plugins: { annotation: { annotations: { current: marker } } } },
  });
  c.el.dataset.tradeoffMarker = String(t.epsilonPerFace);
}

function updateProposal(c, site, audit) {
  if (!c.pending) return;
  const rows = audit.filter((a) => a.site === site && a.source === c.pending.source && a.outcome !== 'PENDING');
  if (rows.length === 0) return;
  const out = $('.proposal-result', c.el);
  out.className = `proposal-result outcome-${rows[0].outcome}`;
  out.textContent = rows.map((a) => `${a.gateway}: ${a.outcome}, ε ${fmt(a.epsilonApplied)} applied`
    + (a.reason ? ` (${a.reason})` : '')).join('; ');
  out.dataset.outcome = rows[0].outcome;
  c.pending = null;
}

function renderModels(models) {
  fillTable($('[data-testid=models] tbody'), models, (tr, m) => {
    cell(tr, m.site);
    cell(tr, m.basisId);
    cell(tr, m.mechanism);
    cell(tr, m.version);
    cell(tr, new Date(m.trainedAt).toLocaleString());
    cell(tr, m.enrollments);
    cell(tr, m.labels.length);
    cell(tr, m.trainingAccuracy, undefined);
    cell(tr, m.validationAccuracy);
    cell(tr, `${m.served}${m.servedForced ? ' (forced)' : ''}: ${fmt(m.heldOutMlpAccuracy, 3)} / `
      + `${fmt(m.heldOutNcmAccuracy, 3)}, n ${m.heldOutEnrollments}`).dataset.served = m.served;
    const o = m.openSet;
    cell(tr, o ? `${pct(o.heldOutFpir)} [${pct(o.heldOutFpirLow95)}, ${pct(o.heldOutFpirHigh95)}] of `
      + `${o.heldOutStrangers} (${o.heldOutPeople} people); target ${pct(o.fpirTarget)}, `
      + `${o.calibrationStrangers} calibrating` : 'not calibrated (fixed margin)');
  });
}

function pct(v) {
  return `${(100 * v).toFixed(2)}%`;
}

function renderAudit(audit) {
  fillTable($('[data-testid=audit] tbody'), audit.slice(0, 100), (tr, a) => {
    tr.dataset.source = a.source;
    cell(tr, new Date(a.at).toLocaleString());
    cell(tr, a.site);
    cell(tr, a.gateway);
    cell(tr, a.principal);
    cell(tr, a.source);
    cell(tr, a.outcome, `outcome-${a.outcome}`);
    cell(tr, a.epsilonRequested);
    cell(tr, a.epsilonApplied);
    cell(tr, a.reason);
  });
}

start();
