// The Infinigram explorer: one page over the server's public JSON API (relative URLs, so it
// talks only to the origin that served it). Corpus text is always inserted as text nodes,
// never parsed as HTML: corpora contain markup. The route lives in the URL hash
// (#/count?dataset=kjv&q=the+LORD), so any result can be shared and reloaded.
'use strict';

const PANELS = ['datasets', 'count', 'predict', 'generate', 'trace', 'search'];
const enc = new TextEncoder();
const dec = new TextDecoder();
const $ = (sel, root = document) => root.querySelector(sel);

let datasets = [];          // GET /v1/datasets
let datasetsRead = false;   // the list above has come
const LISTED_MAX = 20000;   // occurrences the concordance pages through (count's positions)
let spanFields = [];        // names of /v1/spans fields, from GET /v1
let current = null;         // the route being shown: {panel, params}
const runSeq = {};          // per panel: the latest run, so late answers are dropped

// ---------------------------------------------------------------- DOM helpers

// el('div', {class: 'x', onclick: f}, 'text', child): strings become text nodes.
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    e.append(typeof k === 'string' || typeof k === 'number' ? document.createTextNode(String(k)) : k);
  }
  return e;
}

function clear(node) { node.replaceChildren(); return node; }

function status(panel, msg, isError) {
  const s = $(`#p-${panel} .status`);
  if (!s) return;
  s.textContent = msg || '';
  s.classList.toggle('error', !!isError);
}

const fmtInt = (n) => Number(n).toLocaleString('en-US');
const fmtMs = (ms) => (ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0)) + ' ms';
const baseName = (p) => (p || '').split('/').pop() || p;

// How a next-character symbol is shown: whitespace made visible.
function visible(sym) {
  if (sym === ' ') return '␣';
  if (sym === '\n') return '↵';
  if (sym === '\t') return '⇥';
  if (sym === '\r') return '␍';
  return sym;
}

// The snippet form of text (as the server draws snippets): newline as ↵, tab and CR as a
// space, other control characters as '.'.
function snippetForm(s) {
  return s.replace(/\n/g, '↵').replace(/[\t\r]/g, ' ').replace(/[\x00-\x1f\x7f]/g, '.');
}

const utf8len = (s) => enc.encode(s).length;

// The text of an answer's object: `text`, or — when the bytes are not NUL-free UTF-8 (a span
// may end inside a character) — its `text_hex` decoded for display, bad bytes as U+FFFD.
function textOf(o) {
  if (typeof o.text === 'string') return o.text;
  const hex = o.text_hex || '';
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.substr(2 * i, 2), 16);
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}

// byteAt[i] = UTF-8 bytes before UTF-16 index i, for i = 0..s.length.
function byteIndex(s) {
  const b = new Array(s.length + 1);
  let n = 0;
  for (let i = 0; i < s.length;) {
    const cp = s.codePointAt(i);
    const units = cp > 0xffff ? 2 : 1;
    b[i] = n;
    if (units === 2) b[i + 1] = n;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    i += units;
  }
  b[s.length] = n;
  return b;
}

// The UTF-16 index of byte offset `off` (the first index at or after it).
function indexOfByte(b, off) {
  let lo = 0, hi = b.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (b[mid] < off) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Appends `text` to `parent` with ranges [{s, e, cls, ref}] (UTF-16 indexes) marked;
// overlapping ranges give segments with class `depth2`. Returns the marked segments,
// each with .refs (the ranges covering it).
function markText(parent, text, ranges) {
  const cuts = new Set([0, text.length]);
  for (const r of ranges) { cuts.add(Math.max(0, Math.min(text.length, r.s))); cuts.add(Math.max(0, Math.min(text.length, r.e))); }
  const pts = [...cuts].sort((a, b) => a - b);
  const segs = [];
  for (let i = 0; i + 1 < pts.length; i++) {
    const a = pts[i], z = pts[i + 1];
    const piece = text.slice(a, z);
    const refs = ranges.filter((r) => r.s <= a && r.e >= z && r.e > r.s);
    if (!refs.length) { parent.append(document.createTextNode(piece)); continue; }
    const cls = [...new Set(refs.map((r) => r.cls))].join(' ') + (refs.length > 1 ? ' depth2' : '');
    const m = el('mark', { class: cls }, piece);
    m.refs = refs;
    parent.append(m);
    segs.push(m);
  }
  return segs;
}

// ---------------------------------------------------------------- API

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  };
  const r = await fetch(path, init);
  let o;
  try { o = await r.json(); } catch (e) { throw new Error(`${path}: HTTP ${r.status}`); }
  if (!r.ok || o.error) throw new Error(o.error ? o.error.message : `${path}: HTTP ${r.status}`);
  return o;
}

// Several /v1/doc requests in one batch; failed ones are null.
async function docs(dataset, queries) {
  if (!queries.length) return [];
  const o = await api('v1/doc', { dataset, queries });
  return o.results.map((x) => (x.error ? null : x));
}

// ---------------------------------------------------------------- routing

function parseHash() {
  const h = location.hash.replace(/^#\/?/, '');
  const q = h.indexOf('?');
  const name = q < 0 ? h : h.slice(0, q);
  return { panel: PANELS.includes(name) ? name : 'datasets', params: new URLSearchParams(q < 0 ? '' : h.slice(q + 1)) };
}

function go(panel, params) {
  const p = new URLSearchParams(params);
  const ds = dataset();
  if (ds && !p.has('dataset')) p.set('dataset', ds);
  const s = p.toString();
  const h = `#/${panel}${s ? '?' + s : ''}`;
  if (location.hash === h) route(); else location.hash = h;
}

function dataset() { return $('#dataset').value || null; }

function formParams(form) {
  const p = new URLSearchParams();
  for (const f of form.elements) {
    if (!f.name) continue;
    if (f.type === 'checkbox') { if (f.checked) p.set(f.name, '1'); } else if (f.value !== '') p.set(f.name, f.value);
  }
  return p;
}

// The form shows the route: its fields, the others back to their defaults.
function fillForm(form, params) {
  form.reset();
  for (const f of form.elements) {
    if (!f.name || !params.has(f.name)) continue;
    if (f.type === 'checkbox') f.checked = params.get(f.name) === '1'; else f.value = params.get(f.name);
  }
  showModelOptions(form);
}

// Only the controls of the chosen model are shown.
function showModelOptions(form) {
  const m = form.elements.model;
  if (!m) return;
  for (const kind of ['ngram', 'interp', 'weighted'])
    for (const l of form.querySelectorAll(`.opt-${kind}`)) l.hidden = m.value !== kind;
}

function route() {
  current = parseHash();
  const { panel, params } = current;
  const ds = params.get('dataset');
  // a dataset is unknown only once the list has come (while it loads, or when it failed, the
  // link is taken at its word)
  const known = !ds || !datasetsRead || [...$('#dataset').options].some((o) => o.value === ds);
  if (ds && known) $('#dataset').value = ds;
  for (const p of PANELS) $(`#p-${p}`).hidden = p !== panel;
  for (const a of document.querySelectorAll('#tabs a')) {
    const on = a.dataset.panel === panel;
    a.classList.toggle('active', on);
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    const s = new URLSearchParams();
    if (dataset()) s.set('dataset', dataset());
    a.href = `#/${a.dataset.panel}${s.toString() ? '?' + s : ''}`;
  }
  const form = $(`#${panel}-form`);
  if (form) fillForm(form, params);
  document.title = `Infinigram · ${panel}${params.get('q') ? ': ' + params.get('q').slice(0, 40) : ''}`;
  if (panel === 'datasets') renderDatasets();
  else if (!known) { // a shared link naming a dataset this server lacks: said, not answered from another one
    const listed = datasets.find((d) => d.name === ds);
    status(panel, listed ? `Dataset "${ds}" cannot be queried here (it is ${listed.status}): choose one above.`
      : `This server has no dataset named "${ds}": choose one above.`, true);
    const out = $(`#${panel}-out`);
    if (out) clear(out);
  } else if (params.has('q') && RUN[panel]) RUN[panel](params);
}

// ---------------------------------------------------------------- datasets

function renderDatasets() {
  const out = clear($('#datasets-out'));
  if (!datasets.length) { out.append(el('p', {}, 'No dataset is served.')); return; }
  const tb = el('tbody');
  for (const d of datasets) {
    const usable = d.status === 'built' || d.status === 'stale';
    const on = d.name === dataset();
    tb.append(el('tr', { class: on ? 'selected' : '' },
      el('td', {}, usable ? el('button', {
        type: 'button', class: 'use', 'aria-pressed': on ? 'true' : 'false',
        onclick: () => { $('#dataset').value = d.name; go('datasets', new URLSearchParams({ dataset: d.name })); },
      }, on ? 'in use' : 'use') : ''),
      el('td', {}, d.name),
      el('td', {}, d.status === 'stale' ? el('span', { class: 'badge stale', title: 'a source changed since the build' }, 'stale') : d.status),
      el('td', { class: 'num' }, fmtBytes(d.bytes)),
      el('td', { class: 'num' }, fmtInt(d.documents)),
      el('td', { class: 'num' }, fmtInt(d.shards)),
      el('td', { class: 'when', title: d.built || '' }, d.built ? `${d.built.slice(0, 10)} ${d.built.slice(11, 16)} UTC` : '—')));
  }
  out.append(el('div', { class: 'scroll' }, el('table', { class: 'grid', id: 'datasets-table' },
    el('thead', {}, el('tr', {}, ['', 'name', 'status', 'size', 'documents', 'shards', 'built'].map((h) => el('th', {}, h)))), tb)));
}

function fmtBytes(n) {
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
}

// ---------------------------------------------------------------- document viewer

// Opens a document around a byte offset or a line, highlighting byte ranges
// (marks: [{start, len}] in document bytes) and every occurrence of `terms`.
async function openDoc(spec) {
  const v = $('#viewer');
  v.hidden = false;
  v.spec = spec;
  $('#viewer-title').textContent = `${baseName(spec.name)} (document ${spec.doc})`;
  $('#viewer-title').title = spec.name || '';
  const pre = clear($('#viewer-text'));
  pre.textContent = 'loading…';
  const q = { dataset: spec.dataset, query: spec.doc };
  if (spec.offset !== undefined) q.range = `${Math.max(0, spec.offset - 3000)}:${spec.offset + 3000}`;
  else q.lines = `${Math.max(1, spec.line - 15)}:${spec.line + 45}`;
  let d;
  try { d = await api('v1/doc', q); } catch (e) { pre.textContent = e.message; return; }
  if (v.spec !== spec) return;
  clear(pre);
  const text = textOf(d);
  const b = byteIndex(text);
  const ranges = [];
  for (const m of spec.marks || []) {
    const s = indexOfByte(b, m.start - d.offset), e = indexOfByte(b, m.start + m.len - d.offset);
    if (e > 0 && s < text.length) ranges.push({ s, e, cls: 'hit' });
  }
  for (const t of spec.terms || []) {
    if (!t) continue;
    for (let i = text.indexOf(t); i >= 0; i = text.indexOf(t, i + 1)) ranges.push({ s: i, e: i + t.length, cls: 'span' });
  }
  // one row per line, numbered; marks are cut at line ends
  let lineNo = d.first_line, start = 0, focusRow = null;
  const targetIdx = ranges.length && ranges.some((r) => r.cls === 'hit') ? ranges.find((r) => r.cls === 'hit').s : -1;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end === text.length && start === end && start > 0) break;
    const row = el('div', { class: 'line', 'data-n': lineNo });
    const local = ranges.filter((r) => r.e > start && r.s < end).map((r) => ({ ...r, s: r.s - start, e: r.e - start }));
    markText(row, text.slice(start, end), local);
    if (spec.line === lineNo || (targetIdx >= start && targetIdx <= end && !focusRow)) { row.classList.add('target'); focusRow = row; }
    pre.append(row);
    lineNo++;
    start = end + 1;
  }
  const nav = clear($('.viewer-nav'));
  const first = d.offset, last = d.offset + utf8len(text);
  nav.append(el('span', {}, `lines ${d.first_line}–${lineNo - 1} · bytes ${fmtInt(first)}–${fmtInt(last)} of ${fmtInt(d.bytes)}`));
  if (first > 0) nav.append(el('button', { type: 'button', onclick: () => openDoc({ ...spec, offset: Math.max(0, first - 3000), line: undefined }) }, '◀ earlier'));
  if (last < d.bytes) nav.append(el('button', { type: 'button', onclick: () => openDoc({ ...spec, offset: last + 3000, line: undefined }) }, 'later ▶'));
  if (focusRow) focusRow.scrollIntoView({ block: 'center' });
  pre.focus({ preventScroll: true });
}

function closeDoc() {
  const v = $('#viewer');
  if (v.hidden) return;
  v.hidden = true;
  v.spec = null;
  if (v.returnFocus && document.contains(v.returnFocus)) v.returnFocus.focus();
}

// A row that opens a document on click or Enter.
function opener(row, spec) {
  row.tabIndex = 0;
  row.classList.add('opens');
  const open = () => { $('#viewer').returnFocus = row; openDoc(spec); };
  row.addEventListener('click', open);
  row.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(); } });
  return row;
}

// ---------------------------------------------------------------- count

// Splits a count position's snippet into left context, match and right context where the
// server says the match is (hl0, hl1: UTF-8 byte offsets): on a case-folded dataset the
// snippet shows the original text, in which the folded query need not appear.
function kwic(p) {
  const s = p.snippet || '', b = byteIndex(s);
  const i0 = indexOfByte(b, p.hl0 || 0), i1 = indexOfByte(b, p.hl1 || 0);
  return [s.slice(0, i0), s.slice(i0, i1), s.slice(i1)];
}

RUN_count.width = 40;
async function RUN_count(params) {
  const seq = runSeq.count = (runSeq.count || 0) + 1;
  const out = $('#count-out');
  const q = params.get('q');
  const size = Math.max(1, Math.min(500, parseInt(params.get('size') || '20', 10) || 20));
  const page = Math.max(0, parseInt(params.get('page') || '0', 10) || 0);
  const ds = dataset();
  // each page asks for every occurrence before it (corpus order has no cheaper way in), so
  // the concordance stops at LISTED_MAX: a deep page of a frequent word was 94 MB an answer
  const listed = Math.min(LISTED_MAX, (page + 1) * size);
  if (page * size >= LISTED_MAX) {
    status('count', `The concordance lists the first ${fmtInt(LISTED_MAX)} occurrences: add context to the query to see others.`, true);
    clear(out);
    return;
  }
  status('count', 'counting…');
  let o;
  try {
    o = await api('v1/count', { dataset: ds, query: q, positions: listed, width: RUN_count.width });
  } catch (e) {
    if (seq === runSeq.count) { status('count', e.message, true); clear(out); }
    return;
  }
  if (seq !== runSeq.count) return;
  status('count', '');
  clear(out);
  out.append(el('p', { class: 'summary' },
    el('strong', { class: 'count-value', id: 'count-value' }, fmtInt(o.count)),
    ` occurrence${o.count === 1 ? '' : 's'} of `, el('q', {}, q), ` in ${ds} · `,
    el('span', { class: 'elapsed' }, fmtMs(o.elapsed_ms))));
  const rows = o.positions.slice(page * size);
  if (!rows.length) return;
  const tb = el('tbody');
  for (const p of rows) {
    const [l, m, r] = kwic(p);
    tb.append(opener(el('tr', { class: 'kwic-row' },
      el('td', { class: 'where', title: p.name }, `${baseName(p.name)}:${p.line}:${p.column}`),
      el('td', { class: 'left' }, el('span', {}, l)),
      el('td', { class: 'match' }, el('mark', { class: 'hit' }, m)),
      el('td', { class: 'right' }, r)),
    { dataset: ds, doc: p.doc, name: p.name, offset: p.offset, marks: [{ start: p.offset, len: p.length }] }));
  }
  out.append(el('table', { class: 'kwic', id: 'kwic' }, el('caption', {}, 'Concordance: click a row (or focus it and press Enter) to open the document there'), tb));
  const first = page * size + 1, last = page * size + rows.length;
  const pager = el('div', { class: 'pager' }, el('span', {}, `rows ${fmtInt(first)}–${fmtInt(last)} of ${fmtInt(o.count)}`));
  const to = (n) => { const p = new URLSearchParams(params); p.set('page', String(n)); go('count', p); };
  if (page > 0) pager.append(el('button', { type: 'button', onclick: () => to(page - 1) }, '◀ previous'));
  if (last < o.count && (page + 1) * size < LISTED_MAX) pager.append(el('button', { type: 'button', class: 'next', onclick: () => to(page + 1) }, 'next ▶'));
  else if (last < o.count) pager.append(el('span', { class: 'hint' }, ` (the first ${fmtInt(LISTED_MAX)} are listed: add context to see others)`));
  out.append(pager);
}

// ---------------------------------------------------------------- predict

// The model fields of predict/explain from the panel's controls.
function modelFields(params) {
  switch (params.get('model')) {
    case 'ngram': return { n: parseInt(params.get('n') || '3', 10) };
    case 'interp': return { interp: parseInt(params.get('k') || '2', 10) };
    case 'weighted': return { weighted: params.get('w') || 'linear' };
    default: return {};
  }
}

// The context with its last `used` bytes marked.
function contextView(ctx, used, longest) {
  const b = byteIndex(ctx), total = b[ctx.length];
  const s = indexOfByte(b, Math.max(0, total - used));
  const ls = indexOfByte(b, Math.max(0, total - longest));
  const div = el('div', { class: 'context' });
  const ranges = [];
  if (longest > used) ranges.push({ s: ls, e: ctx.length, cls: 'longest' });
  if (used > 0) ranges.push({ s, e: ctx.length, cls: 'suffix' });
  markText(div, ctx, ranges);
  return div;
}

function bars(cands, chosen) {
  const tb = el('tbody');
  for (const c of cands) {
    const bar = el('div', { class: 'bar' });
    bar.style.width = (100 * c.prob).toFixed(2) + '%';
    tb.append(el('tr', { class: 'cand' + (chosen && c.symbol === chosen ? ' chosen' : '') },
      el('td', { class: 'sym', title: c.bytes_hex ? 'bytes ' + c.bytes_hex : '' }, visible(c.symbol)),
      el('td', { class: 'barcell' }, bar),
      el('td', { class: 'num prob' }, c.prob.toFixed(4)),
      el('td', { class: 'num' }, c.count === undefined ? '' : fmtInt(c.count))));
  }
  return el('table', { class: 'bars' },
    el('thead', {}, el('tr', {}, el('th', {}, 'next'), el('th', {}, 'probability'), el('th', {}, 'p'), el('th', {}, 'count'))), tb);
}

function profileTable(profile, focus) {
  if (!profile || !profile.length) return null;
  const max = Math.max(...profile.map((r) => r.count), 1);
  const tb = el('tbody');
  for (const r of profile) {
    const bar = el('div', { class: 'bar' });
    bar.style.width = (100 * Math.log1p(r.count) / Math.log1p(max)).toFixed(2) + '%';
    tb.append(el('tr', {}, el('td', { class: 'num' }, r.length), el('td', { class: 'barcell' }, bar),
      el('td', { class: 'num' }, fmtInt(r.count)), el('td', { class: 'num' }, fmtInt(r.continue_count)),
      el('td', { class: 'num' }, r.count ? (r.continue_count / r.count).toFixed(3) : '')));
  }
  return el('details', { class: 'profile', open: true },
    el('summary', {}, 'n-gram profile of ', el('q', {}, visible(focus)), ': for each suffix length ℓ, its count and how often ', el('q', {}, visible(focus)), ' follows'),
    el('table', { class: 'bars' }, el('thead', {}, el('tr', {}, ['ℓ', 'count (log)', 'count', 'followed', 'ratio'].map((h) => el('th', {}, h)))), tb));
}

function statsLine(items) {
  return el('dl', { class: 'stats' }, items.flatMap(([k, v, cls]) => [el('dt', {}, k), el('dd', { class: cls || '' }, String(v))]));
}

// The query as the dataset's index holds it (NFC, case folded: count echoes it), so that
// the byte offsets an answer gives mark the text they were computed on, as the shell shows it.
async function indexedText(ds, q) {
  try {
    const o = await api('v1/count', { dataset: ds, query: q });
    return typeof o.query === 'string' && !o.query_ids ? o.query : q;
  } catch (e) {
    return q;
  }
}

async function RUN_predict(params) {
  const seq = runSeq.predict = (runSeq.predict || 0) + 1;
  const out = $('#predict-out');
  const given = params.get('q');
  const ds = dataset();
  const top = Math.max(1, Math.min(256, parseInt(params.get('top') || '10', 10) || 10));
  const mf = modelFields(params);
  status('predict', 'predicting…');
  let o, ex = null, q = given;
  try {
    [o, ex, q] = await Promise.all([
      api('v1/predict', { dataset: ds, query: given, top, ...mf }),
      api('v1/explain', { dataset: ds, query: given, top: 1, positions: 0, ...mf }).catch(() => null),
      indexedText(ds, given),
    ]);
  } catch (e) {
    if (seq === runSeq.predict) { status('predict', e.message, true); clear(out); }
    return;
  }
  if (seq !== runSeq.predict) return;
  status('predict', '');
  clear(out);
  const used = Math.max(0, (o.effective_n || 1) - 1);
  out.append(contextView(q, used, o.longest_match || 0));
  out.append(el('p', { class: 'hint' }, 'marked: the suffix the model conditions on (effective n − 1 bytes)',
    (o.longest_match || 0) > used ? '; underlined: the longest suffix that occurs' : ''));
  out.append(statsLine([['model', o.model], ['effective n', o.effective_n, 'effective-n'], ['longest match', o.longest_match],
    ['suffix count', fmtInt(o.suffix_count)], ['sparse', o.sparse ? 'yes' : 'no', 'sparse'], ['time', fmtMs(o.elapsed_ms)]]));
  if (!o.candidates.length) out.append(el('p', {}, 'The model gives no next character here.'));
  else out.append(bars(o.candidates));
  if (o.levels && o.levels.length) {
    out.append(el('details', { class: 'levels' }, el('summary', {}, `mixture over ${o.levels.length} suffix lengths`),
      el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, ['ℓ', 'total', 'weight'].map((h) => el('th', {}, h)))),
        el('tbody', {}, o.levels.map((l) => el('tr', {}, el('td', { class: 'num' }, l.length), el('td', { class: 'num' }, fmtInt(l.total)),
          el('td', { class: 'num' }, l.weight.toFixed(4))))))));
  }
  if (ex && ex.candidates && ex.candidates.length) {
    const p = profileTable(ex.profile, ex.candidates[0].symbol);
    if (p) out.append(p);
  }
}

// ---------------------------------------------------------------- generate

const gen = { chars: [], effn: [], prompt: '', model: {}, ctrl: null, sel: -1 };

function shade(n) {
  return n <= 1 ? 0 : n <= 2 ? 1 : n <= 4 ? 2 : n <= 8 ? 3 : n <= 16 ? 4 : n <= 32 ? 5 : 6;
}

function completionModel(params) {
  switch (params.get('model')) {
    case 'infgram': return { api: { interp: 0 }, explain: {} };
    case 'ngram': { const n = parseInt(params.get('n') || '5', 10); return { api: { ngram: n }, explain: { n } }; }
    default: { const k = parseInt(params.get('k') || '2', 10); return { api: { interp: k }, explain: { interp: k } }; }
  }
}

async function RUN_generate(params) {
  const seq = runSeq.generate = (runSeq.generate || 0) + 1;
  if (gen.ctrl) gen.ctrl.abort();
  const ctrl = gen.ctrl = new AbortController();
  const out = clear($('#generate-out'));
  const ds = dataset();
  const m = completionModel(params);
  Object.assign(gen, { chars: [], effn: [], prompt: params.get('q'), model: m, sel: -1, dataset: ds });
  const body = {
    model: ds, prompt: gen.prompt, stream: true, ...m.api,
    max_tokens: Math.max(1, Math.min(5000, parseInt(params.get('max') || '200', 10) || 200)),
    temperature: Math.max(0, parseFloat(params.get('t') || '1')),
  };
  if (params.get('seed')) body.seed = parseInt(params.get('seed'), 10);
  const text = el('div', { class: 'generated', id: 'generated', tabindex: '0', role: 'listbox', 'aria-label': 'generated text: arrows move, Enter explains' },
    el('span', { class: 'prompt' }, gen.prompt));
  text.addEventListener('keydown', genKey);
  const legend = el('p', { class: 'legend' }, 'effective n: ',
    ['1', '2', '3–4', '5–8', '9–16', '17–32', '33+'].map((t, i) => el('span', { class: `ch n${i}` }, t)),
    ' · click a character (or use the arrows and Enter) to see why it was chosen');
  const stop = el('button', { type: 'button', onclick: () => ctrl.abort() }, 'Stop');
  const explain = el('div', { class: 'explain', id: 'explain' });
  out.append(legend, text, el('div', { class: 'gen-bar' }, stop), explain);
  status('generate', 'generating…');
  const t0 = performance.now();
  let finish = null;
  try {
    const r = await fetch('v1/completions', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: ctrl.signal,
    });
    if (!r.ok) {
      let msg = `HTTP ${r.status}`;
      try { msg = (await r.json()).error.message; } catch (e) { /* keep the status */ }
      throw new Error(msg);
    }
    const reader = r.body.getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
        const ch = JSON.parse(ev.slice(6)).choices[0];
        if (ch.finish_reason) finish = ch.finish_reason;
        appendGenerated(text, ch.text || '', ch.effective_n || []);
      }
    }
  } catch (e) {
    if (seq === runSeq.generate) status('generate', e.name === 'AbortError' ? `stopped after ${gen.chars.length} characters` : e.message, e.name !== 'AbortError');
    stop.remove();
    return;
  }
  if (seq !== runSeq.generate) return;
  stop.remove();
  const n = gen.effn.slice().sort((a, b) => a - b);
  status('generate', `${gen.chars.length} characters in ${fmtMs(performance.now() - t0)}` +
    (finish ? ` · finished: ${finish}` : '') + (n.length ? ` · median effective n ${n[n.length >> 1]}` : ''));
}

function appendGenerated(box, text, effn) {
  let j = 0;
  for (const c of text) {
    const i = gen.chars.length;
    const n = effn[j++];
    gen.chars.push(c);
    gen.effn.push(n);
    const s = el('span', { class: `ch n${n === undefined ? 0 : shade(n)}`, role: 'option', title: n === undefined ? '' : `effective n ${n}`, 'data-i': i },
      c === '\n' ? '↵\n' : c);
    s.addEventListener('click', () => explainStep(i));
    box.append(s);
  }
}

function genKey(e) {
  if (!gen.chars.length) return;
  let i = gen.sel;
  if (e.key === 'ArrowRight') i = Math.min(gen.chars.length - 1, i + 1);
  else if (e.key === 'ArrowLeft') i = Math.max(0, i < 0 ? gen.chars.length - 1 : i - 1);
  else if (e.key === 'Home') i = 0;
  else if (e.key === 'End') i = gen.chars.length - 1;
  else if (e.key === 'Enter') { e.preventDefault(); if (i >= 0) explainStep(i); return; } else return;
  e.preventDefault();
  selectChar(i);
}

function selectChar(i) {
  gen.sel = i;
  for (const s of document.querySelectorAll('#generated .ch.sel')) { s.classList.remove('sel'); s.removeAttribute('aria-selected'); }
  const s = $(`#generated .ch[data-i="${i}"]`);
  if (s) { s.classList.add('sel'); s.setAttribute('aria-selected', 'true'); }
}

// Why character i: the explain evidence for its context, with source snippets.
async function explainStep(i) {
  selectChar(i);
  const seq = runSeq.explain = (runSeq.explain || 0) + 1;
  const box = clear($('#explain'));
  const ctx = gen.prompt + gen.chars.slice(0, i).join('');
  const chosen = gen.chars[i];
  box.append(el('p', {}, 'explaining…'));
  let o, snips = [];
  try {
    o = await api('v1/explain', { dataset: gen.dataset, query: ctx, top: 5, positions: 3, ...gen.model.explain });
    const cand = o.candidates.find((c) => c.symbol === chosen) || o.candidates[0];
    const pos = cand ? cand.positions || [] : [];
    snips = await docs(gen.dataset, pos.map((p) => ({ query: p.doc, range: `${Math.max(0, p.offset - 60)}:${p.offset + 140}` })));
    o.cand = cand;
  } catch (e) {
    if (seq === runSeq.explain) { clear(box).append(el('p', { class: 'error' }, e.message)); }
    return;
  }
  if (seq !== runSeq.explain) return;
  clear(box);
  box.append(el('h3', {}, 'Why ', el('q', {}, visible(chosen)), ` (character ${i + 1}, effective n ${gen.effn[i] ?? '?'})`));
  box.append(statsLine([['model', o.model], ['effective n', o.effective_n, 'effective-n'], ['suffix count', fmtInt(o.suffix_count)], ['sparse', o.sparse ? 'yes' : 'no', 'sparse']]));
  box.append(contextView(ctx.slice(-200), Math.max(0, o.effective_n - 1), 0));
  box.append(bars(o.candidates, chosen));
  const p = profileTable(o.profile, o.candidates.length ? (o.candidates.find((c) => c.symbol === chosen) || o.candidates[0]).symbol : chosen);
  if (p) box.append(p);
  if (o.cand && snips.length) {
    const ctxBytes = enc.encode(ctx), symBytes = enc.encode(o.cand.symbol);
    const list = el('ol', { class: 'sources' });
    o.cand.positions.forEach((pos, k) => {
      const d = snips[k];
      if (!d) return;
      // the longest tail of the context that ends right before the symbol at this position
      const tb = enc.encode(textOf(d)), rel = pos.offset - d.offset;
      let L = -1;
      for (let z = Math.min(tb.length - symBytes.length, rel + ctxBytes.length); z >= rel && L < 0; z--) {
        const n = z - rel;
        let ok = true;
        for (let a = 0; a < n && ok; a++) ok = tb[rel + a] === ctxBytes[ctxBytes.length - n + a];
        for (let a = 0; a < symBytes.length && ok; a++) ok = tb[z + a] === symBytes[a];
        if (ok) L = n;
      }
      const text = snippetForm(textOf(d));
      const b = byteIndex(textOf(d));
      const li = el('li', {}, el('span', { class: 'where' }, `${baseName(pos.name)}:${pos.line}:${pos.column} `));
      const snip = el('span', { class: 'snippet' });
      const ranges = L < 0 ? [] : [{ s: indexOfByte(b, rel), e: indexOfByte(b, rel + L), cls: 'suffix' },
        { s: indexOfByte(b, rel + L), e: indexOfByte(b, rel + L + symBytes.length), cls: 'hit' }];
      markText(snip, text, ranges);
      li.append(snip);
      list.append(opener(li, { dataset: gen.dataset, doc: pos.doc, name: pos.name, offset: pos.offset, marks: L < 0 ? [] : [{ start: pos.offset, len: L + symBytes.length }] }));
    });
    box.append(el('h4', {}, `Where `, el('q', {}, visible(o.cand.symbol)), ` follows the context in the corpus`), list);
  }
}

// ---------------------------------------------------------------- trace

const trace = { spans: [], text: '', dataset: null, snips: new Map() };

async function RUN_trace(params) {
  const seq = runSeq.trace = (runSeq.trace || 0) + 1;
  const out = $('#trace-out');
  const given = params.get('q');
  const ds = dataset();
  const body = { dataset: ds, query: given, positions: Math.max(0, Math.min(100, parseInt(params.get('positions') || '5', 10))) };
  for (const k of ['min_len', 'max_count']) if (params.get(k)) body[k] = parseInt(params.get(k), 10);
  if (params.get('words') === '1') body.words = true;
  if (spanFields.includes('rank')) body.rank = 'bm25';
  status('trace', 'tracing…');
  const t0 = performance.now();
  let o, q = given;
  try { [o, q] = await Promise.all([api('v1/spans', body), indexedText(ds, given)]); } catch (e) {
    if (seq === runSeq.trace) { status('trace', e.message, true); clear(out); }
    return;
  }
  if (seq !== runSeq.trace) return;
  Object.assign(trace, { spans: o.spans, text: q, dataset: ds, snips: new Map() });
  clear(out);
  const nv = o.novelty || {};
  out.append(el('p', { class: 'summary' },
    el('strong', { id: 'span-count' }, String(o.spans.length)), ` span${o.spans.length === 1 ? '' : 's'} found verbatim · novelty `,
    el('strong', { id: 'novelty' }, nv.uncovered_fraction === undefined ? '—' : (100 * nv.uncovered_fraction).toFixed(1) + '%'),
    ` of bytes in no span of ${nv.n ?? '?'} bytes or more · server ${fmtMs(o.elapsed_ms)}`));
  const b = byteIndex(q);
  const ranges = o.spans.map((s, k) => ({ s: indexOfByte(b, s.start), e: indexOfByte(b, s.start + s.length), cls: 'span', k }));
  const box = el('div', { class: 'traced', id: 'traced' });
  for (const m of markText(box, q, ranges)) {
    m.tabIndex = 0;
    const show = () => showSpans(m.refs.map((r) => r.k));
    m.addEventListener('mouseenter', show);
    m.addEventListener('focus', show);
    m.addEventListener('click', show);
  }
  out.append(box);
  const list = el('ol', { class: 'span-list' });
  o.spans.forEach((s, k) => {
    list.append(el('li', {}, el('button', { type: 'button', class: 'span-btn', onclick: () => showSpans([k]) },
      el('q', {}, snippetForm(textOf(s))), ` · ${s.length} bytes · ${fmtInt(s.count)} occurrence${s.count === 1 ? '' : 's'}`)));
  });
  const side = el('div', { class: 'span-sources', id: 'span-sources' }, el('p', { class: 'hint' }, 'Hover, focus or click a highlighted span to list its sources.'));
  out.append(el('div', { class: 'trace-cols' }, el('div', {}, el('h3', {}, 'Spans'), list), side));
  status('trace', `traced ${fmtInt(utf8len(q))} bytes: spans on screen in ${fmtMs(performance.now() - t0)}`);
}

async function showSpans(ks) {
  const seq = runSeq.spanSrc = (runSeq.spanSrc || 0) + 1;
  const side = $('#span-sources');
  for (const m of document.querySelectorAll('#traced mark')) m.classList.toggle('active', m.refs.some((r) => ks.includes(r.k)));
  // snippets for sources not fetched yet, in one batch
  const need = [];
  for (const k of ks) for (const [j, src] of (trace.spans[k].sources || []).entries())
    if (!trace.snips.has(`${k}/${j}`)) need.push({ key: `${k}/${j}`, q: { query: src.doc, range: `${Math.max(0, src.offset - 80)}:${src.offset + src.length + 80}` } });
  if (need.length) {
    try {
      const got = await docs(trace.dataset, need.map((x) => x.q));
      need.forEach((x, i) => trace.snips.set(x.key, got[i]));
    } catch (e) { need.forEach((x) => trace.snips.set(x.key, null)); }
  }
  if (seq !== runSeq.spanSrc) return;
  clear(side);
  const terms = trace.spans.map((s) => textOf(s));
  for (const k of ks) {
    const sp = trace.spans[k];
    side.append(el('h3', {}, el('q', {}, snippetForm(textOf(sp))), ` · ${fmtInt(sp.count)} in the corpus`));
    const ol = el('ol', { class: 'sources' });
    (sp.sources || []).forEach((src, j) => {
      const d = trace.snips.get(`${k}/${j}`);
      const li = el('li', {}, el('span', { class: 'where', title: src.name }, `${baseName(src.name)}:${src.line}:${src.column}`));
      if (src.score !== undefined) li.append(el('span', { class: 'score' }, ` score ${Number(src.score).toFixed(2)}`));
      if (src.duplicates) li.append(el('span', { class: 'dups' }, ` +${src.duplicates} identical document${src.duplicates === 1 ? '' : 's'}`));
      if (d) {
        const b = byteIndex(textOf(d)), rel = src.offset - d.offset;
        const snip = el('span', { class: 'snippet' });
        markText(snip, snippetForm(textOf(d)), [{ s: indexOfByte(b, rel), e: indexOfByte(b, rel + src.length), cls: 'hit' }]);
        li.append(el('br'), snip);
      }
      ol.append(opener(li, { dataset: trace.dataset, doc: src.doc, name: src.name, offset: src.offset, marks: [{ start: src.offset, len: src.length }], terms }));
    });
    if (!sp.sources || !sp.sources.length) ol.append(el('li', {}, 'no sources listed (raise “sources”)'));
    side.append(ol);
  }
}

// ---------------------------------------------------------------- search

async function RUN_search(params) {
  const seq = runSeq.search = (runSeq.search || 0) + 1;
  const out = $('#search-out');
  const q = params.get('q');
  const ds = dataset();
  const limit = Math.max(1, Math.min(1000, parseInt(params.get('limit') || '10', 10) || 10));
  const offset = Math.max(0, parseInt(params.get('offset') || '0', 10) || 0);
  const body = { dataset: ds, query: q, limit, offset };
  if (params.get('within')) body.within = parseInt(params.get('within'), 10);
  status('search', 'searching…');
  let o, lines = [];
  try {
    o = await api('v1/search', body);
    lines = await docs(ds, o.documents.map((d) => ({ query: d.doc, lines: `${d.first_line}:${d.first_line + 1}` })));
  } catch (e) {
    if (seq === runSeq.search) { status('search', e.message, true); clear(out); }
    return;
  }
  if (seq !== runSeq.search) return;
  status('search', '');
  clear(out);
  const terms = [...q.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1].replace(/\\(.)/g, '$1'));
  out.append(el('p', { class: 'summary' },
    el('strong', { id: 'search-total' }, fmtInt(o.documents_total)), ` matching document${o.documents_total === 1 ? '' : 's'}`,
    o.approximate ? el('span', { class: 'badge' }, ` approximate (sampled, ×${o.scale.toFixed(2)})`) : ' (exact)',
    ` · ${fmtMs(o.elapsed_ms)}`));
  const tb = el('tbody');
  o.documents.forEach((d, i) => {
    const line = lines[i] ? textOf(lines[i]).replace(/\n$/, '') : '';
    const cell = el('td', { class: 'snippet' });
    markText(cell, line.slice(0, 300), terms.flatMap((t) => {
      const r = [];
      for (let k = t ? line.indexOf(t) : -1; k >= 0 && k < 300; k = line.indexOf(t, k + 1)) r.push({ s: k, e: k + t.length, cls: 'hit' });
      return r;
    }));
    tb.append(opener(el('tr', { class: 'doc-row' },
      el('td', { class: 'where', title: d.name }, `${baseName(d.name)}`), el('td', { class: 'num' }, d.doc),
      el('td', { class: 'num' }, fmtInt(d.hits_estimated ?? d.hits)), el('td', { class: 'num' }, d.first_line), cell),
    { dataset: ds, doc: d.doc, name: d.name, line: d.first_line, terms }));
  });
  if (o.documents.length) {
    out.append(el('div', { class: 'scroll' }, el('table', { class: 'grid docs', id: 'search-docs' },
      el('thead', {}, el('tr', {}, ['document', 'id', 'hits', 'first line', 'first hit'].map((h) => el('th', {}, h)))), tb)));
  }
  const pager = el('div', { class: 'pager' }, el('span', {}, o.documents.length ? `documents ${fmtInt(offset + 1)}–${fmtInt(offset + o.documents.length)}` : 'no documents on this page'));
  const to = (n) => { const p = new URLSearchParams(params); p.set('offset', String(n)); go('search', p); };
  if (offset > 0) pager.append(el('button', { type: 'button', onclick: () => to(Math.max(0, offset - limit)) }, '◀ previous'));
  if (offset + o.documents.length < o.documents_total) pager.append(el('button', { type: 'button', onclick: () => to(offset + limit) }, 'next ▶'));
  out.append(pager);
}

const RUN = { count: RUN_count, predict: RUN_predict, generate: RUN_generate, trace: RUN_trace, search: RUN_search };

// ---------------------------------------------------------------- start

function keys(e) {
  const t = e.target;
  const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT');
  if (e.key === 'Escape') { closeDoc(); return; }
  if (typing || e.altKey || e.ctrlKey || e.metaKey) return;
  const n = '123456'.indexOf(e.key);
  if (n >= 0) { e.preventDefault(); go(PANELS[n], new URLSearchParams()); return; }
  if (e.key === '/') {
    const f = $(`#p-${current ? current.panel : 'datasets'} [name=q]`);
    if (f) { e.preventDefault(); f.focus(); }
  }
}

async function start() {
  for (const p of PANELS) {
    const form = $(`#${p}-form`);
    if (!form) continue;
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const params = formParams(form);
      // an empty context is a question too (predict: the unigram); elsewhere it is a slip
      if (!params.has('q') && p !== 'generate' && p !== 'predict') { status(p, 'type a query first', true); return; }
      if (!params.has('q')) params.set('q', '');
      go(p, params);
    });
    if (form.elements.model) form.elements.model.addEventListener('change', () => showModelOptions(form));
    // Enter in a textarea runs the query; Shift+Enter is a new line
    for (const ta of form.querySelectorAll('textarea'))
      ta.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); } });
  }
  $('#viewer-close').addEventListener('click', closeDoc);
  document.addEventListener('keydown', keys);
  $('#dataset').addEventListener('change', () => {
    const { panel, params } = parseHash();
    params.set('dataset', dataset());
    go(panel, params);
  });
  window.addEventListener('hashchange', route);
  try {
    const [ds, ref] = await Promise.all([api('v1/datasets'), api('v1').catch(() => null)]);
    datasets = ds.datasets;
    datasetsRead = true;
    const spans = ref && ref.endpoints.find((x) => x.path === '/v1/spans');
    spanFields = spans ? spans.fields.map((f) => f.name) : [];
  } catch (e) {
    $('#datasets-out').textContent = 'Cannot read the datasets: ' + e.message;
  }
  const sel = $('#dataset');
  for (const d of datasets) if (d.status === 'built' || d.status === 'stale') sel.append(el('option', { value: d.name }, d.name));
  route();
}

start();
