// The explorer page in Debian's chromium (driven by playwright-core, no browser download):
// every panel against the server's JSON API for the same queries, corpus markup shown as
// text, a keyboard-only count, first contentful paint, the bytes served for /, and
// screenshots at 1280×800 and 390×844.
//   node explorer.cjs URL SMALL_DATASET BIG_DATASET SCREENSHOT_DIR [FOLDED_DATASET]
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const [URL_, SMALL, BIG, SHOTS, FOLDED] = process.argv.slice(2);
const base = URL_.replace(/\/$/, '');
let passed = 0, failed = 0;
const check = (cond, what) => { if (cond) passed++; else { failed++; console.log('FAIL:', what); } };

async function api(p, body) {
  const r = await fetch(base + p, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
  return r.json();
}

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ig-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push('page error: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
  let dialogs = 0;
  page.on('dialog', (d) => { dialogs++; d.dismiss().catch(() => {}); });
  const foreign = [];
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) foreign.push(r.url()); });
  const bytes = {};
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/v1')) return;
    try { bytes[u.pathname] = (await r.body()).length; } catch (e) { bytes[u.pathname] = -1; }
  });
  const text = (sel) => page.locator(sel).first().innerText();
  const waitText = async (sel) => { await page.locator(sel).first().waitFor({ timeout: 10000 }); return text(sel); };
  const num = (s) => Number(String(s).replace(/,/g, ''));
  const utf8 = (x) => Buffer.byteLength(x);
  // A route, with every panel's output emptied first, so a wait sees only the new answer.
  const visit = async (hash) => {
    await page.evaluate(() => document.querySelectorAll('.out, .status').forEach((e) => e.replaceChildren()));
    await page.goto(base + hash);
  };

  // ---- load: first contentful paint, bytes, headers, datasets panel
  const res = await page.goto(base + '/', { waitUntil: 'load' });
  check(res.status() === 200 && /default-src 'none'/.test(res.headers()['content-security-policy'] || ''), 'the page has a CSP');
  await page.locator('#datasets-table').waitFor({ timeout: 10000 });
  const fcp = await page.evaluate(() => {
    const e = performance.getEntriesByName('first-contentful-paint')[0];
    return e ? e.startTime : -1;
  });
  // again in a browser already running (the first load also starts the renderer process)
  await page.goto('about:blank');
  await page.goto(base + '/#/datasets', { waitUntil: 'load' });
  await page.locator('#datasets-table').waitFor({ timeout: 10000 });
  const fcp2 = await page.evaluate(() => {
    const e = performance.getEntriesByName('first-contentful-paint')[0];
    return e ? e.startTime : -1;
  });
  console.log(`first contentful paint: ${fcp.toFixed(1)} ms in a fresh browser, ${fcp2.toFixed(1)} ms on a second load (target < 200 ms on loopback)`);
  check(fcp > 0 && fcp < 1000 && fcp2 > 0 && fcp2 < 1000, `first contentful paint measured and under a second: ${fcp}, ${fcp2}`);
  const total = Object.values(bytes).reduce((a, b) => a + b, 0);
  console.log(`bytes served for /: ${total} (${JSON.stringify(bytes)})`);
  check(bytes['/'] > 0 && bytes['/app.js'] > 0 && bytes['/style.css'] > 0 && total < 150 * 1024, `everything for / under 150 KB: ${total}`);
  const dsApi = (await api('/v1/datasets')).datasets;
  const rows = await page.locator('#datasets-table tbody tr').allInnerTexts();
  check(rows.length === dsApi.length && dsApi.every((d, i) => rows[i].includes(d.name) && rows[i].includes(d.documents.toLocaleString('en-US'))
    && rows[i].includes(d.built.slice(0, 10))), `datasets panel lists the catalog: ${JSON.stringify(rows)}`);
  const stale = dsApi.filter((d) => d.status === 'stale').map((d) => d.name);
  const flagged = await page.locator('#datasets-table tbody tr:has(.badge.stale) td:nth-child(2)').allInnerTexts();
  check(stale.length === 1 && JSON.stringify(flagged) === JSON.stringify(stale), `the stale dataset is flagged: ${flagged} vs ${stale}`);
  // picking a dataset on the panel selects it everywhere
  await page.locator('#datasets-table tbody tr', { hasText: SMALL }).locator('button.use').click();
  await page.waitForFunction((n) => document.querySelector('#dataset').value === n && location.hash.includes('dataset=' + n), SMALL);
  check(true, 'a dataset is picked');

  // ---- count: the count, the concordance, paging, the document viewer
  const countQ = async (q, extra = '') => {
    await visit(`/#/count?dataset=${SMALL}&q=${encodeURIComponent(q)}${extra}`);
    await page.waitForFunction((q) => document.querySelector('#count-value') && document.querySelector('#count-out q').textContent === q, q);
    return num(await text('#count-value'));
  };
  let c = await countQ('the');
  let a = await api('/v1/count', { dataset: SMALL, query: 'the' });
  check(c === a.count && c > 3, `count shown ${c} == /v1/count ${a.count}`);
  const kw = await page.locator('#kwic tr').count();
  check(kw === Math.min(20, a.count), `one concordance row per occurrence on the page: ${kw}`);
  const matches = await page.locator('#kwic td.match').allInnerTexts();
  check(matches.every((m) => m === 'the'), `the keyword column holds the query: ${JSON.stringify(matches.slice(0, 5))}`);
  c = await countQ('the', '&size=2');
  await page.locator('.pager button.next').click();
  await page.waitForFunction(() => location.hash.includes('page=1'));
  await page.waitForFunction(() => document.querySelector('.pager span') && document.querySelector('.pager span').textContent.startsWith('rows 3–4'));
  const wh = await page.locator('#kwic td.where').allInnerTexts();
  const a4 = await api('/v1/count', { dataset: SMALL, query: 'the', positions: 4 });
  check(wh.length === 2 && wh[0].endsWith(`:${a4.positions[2].line}:${a4.positions[2].column}`), `page 2 shows occurrences 3 and 4: ${wh}`);
  await page.locator('#kwic tr').first().click();
  await page.locator('#viewer-text mark.hit').first().waitFor({ timeout: 10000 });
  check(await page.locator('#viewer').isVisible() && (await text('#viewer-text mark.hit')) === 'the', 'a concordance row opens its document with the match marked');
  await page.keyboard.press('Escape');
  check(await page.locator('#viewer').isHidden(), 'Escape closes the document');

  // ---- a case-folded dataset: matches are marked as the text has them, whatever the length
  // of the query ("masse" matches the 6 bytes of MAẞE; İ, 2 bytes, folds to i and a combining
  // dot, 3 bytes)
  if (FOLDED) {
    for (const [q, want] of [['masse', ['MAẞE', 'Masse']], ['i\u0307stanbul', ['İstanbul']]]) {
      await visit(`/#/count?dataset=${FOLDED}&q=${encodeURIComponent(q)}`);
      await page.waitForFunction((q) => document.querySelector('#count-value') && document.querySelector('#count-out q').textContent === q, q);
      const fm = await page.locator('#kwic td.match').allInnerTexts();
      check(JSON.stringify(fm) === JSON.stringify(want), `folded ${q}: the concordance marks ${JSON.stringify(fm)}`);
      await page.locator('#kwic tr').first().click();
      await page.locator('#viewer-text mark.hit').first().waitFor({ timeout: 10000 });
      const hit = await text('#viewer-text mark.hit');
      check(hit === want[0], `folded ${q}: the document marks ${JSON.stringify(hit)}`);
      await page.keyboard.press('Escape');
    }
    // trace and predict mark offsets of the text as the index holds it (folded): on the text
    // as typed, "İSTANBUL und qqqqqq" had its novel tail marked as found
    const tq = 'İSTANBUL und DIE qqqqqqqq';
    await visit(`/#/trace?dataset=${FOLDED}&q=${encodeURIComponent(tq)}&min_len=4`);
    await page.locator('#traced').waitFor({ timeout: 10000 });
    const fs_ = await api('/v1/spans', { dataset: FOLDED, query: tq, min_len: 4, positions: 5 });
    const marked = await page.locator('#traced mark').allInnerTexts();
    const want = fs_.spans.map((x) => x.text);
    check(fs_.spans.length >= 1 && want.every((w) => marked.some((m) => w.includes(m) || m.includes(w))) && !marked.some((m) => m.includes('q')),
      `folded trace: the marks ${JSON.stringify(marked)} are the spans ${JSON.stringify(want)}, the novel tail unmarked`);
    const fc = await api('/v1/count', { dataset: FOLDED, query: tq });
    check((await text('#traced')) === fc.query, `folded trace: the text shown is the folded query ${JSON.stringify(fc.query)}`);
  }
  // a shared link naming a dataset the server lacks is said, not answered from another one
  await visit('/#/count?dataset=nosuchdataset&q=the');
  await page.waitForFunction(() => /nosuchdataset/.test(document.querySelector('#p-count .status').textContent));
  check((await page.locator('#kwic').count()) === 0, 'an unknown dataset in a link: no answer from another dataset');
  // the concordance pages through the first 20,000 occurrences, not every one before a deep page
  await visit(`/#/count?dataset=${BIG}&q=e&size=500&page=950`);
  await page.waitForFunction(() => /first 20,000/.test(document.querySelector('#p-count .status').textContent));
  check((await page.locator('#kwic').count()) === 0, 'a page past the concordance bound asks the server nothing');

  // ---- markup in the corpus is shown as text
  for (const q of ['<script>alert(1)</script>', '&amp;']) {
    c = await countQ(q);
    a = await api('/v1/count', { dataset: SMALL, query: q });
    const m = await text('#kwic td.match');
    check(c === a.count && c >= 1 && m === q, `${q} counted (${c} vs ${a.count}) and shown literally (${m})`);
    await page.locator('#kwic tr').first().press('Enter');
    await page.locator('#viewer-text mark.hit').first().waitFor({ timeout: 10000 });
    check((await text('#viewer-text')).includes(q) && (await text('#viewer-text mark.hit')) === q, `the document shows ${q} literally`);
    await page.keyboard.press('Escape');
  }
  const scripts = await page.evaluate(() => document.querySelectorAll('script').length);
  check(scripts === 1 && dialogs === 0, `no script from the corpus ran (${scripts} scripts, ${dialogs} dialogs)`);

  // ---- predict: bars, effective n, sparse, the model controls
  const predictQ = async (q, extra) => {
    await visit(`/#/predict?dataset=${BIG}&q=${encodeURIComponent(q)}${extra}`);
    await page.waitForFunction((q) => document.querySelector('#predict-out .context') && document.querySelector('#predict-out .context').textContent === q, q);
  };
  for (const [extra, fields] of [['', {}], ['&model=ngram&n=3', { n: 3 }], ['&model=interp&k=2', { interp: 2 }], ['&model=weighted&w=linear', { weighted: 'linear' }]]) {
    await predictQ('What say', extra);
    const p = await api('/v1/predict', { dataset: BIG, query: 'What say', top: 10, ...fields });
    const syms = await page.locator('#predict-out tr.cand td.sym').allInnerTexts();
    const probs = (await page.locator('#predict-out tr.cand td.prob').allInnerTexts()).map(Number);
    const vis = (s) => (s === ' ' ? '␣' : s === '\n' ? '↵' : s);
    check(syms.length === p.candidates.length && p.candidates.every((x, i) => vis(x.symbol) === syms[i] && Math.abs(x.prob - probs[i]) < 1e-4),
      `predict${extra}: bars == /v1/predict: ${syms} ${probs}`);
    check(num(await text('#predict-out dd.effective-n')) === p.effective_n && (await text('#predict-out dd.sparse')) === (p.sparse ? 'yes' : 'no'),
      `predict${extra}: effective n and sparse shown`);
    const suffix = await text('#predict-out .context mark.suffix');
    check(suffix === 'What say'.slice(-(p.effective_n - 1)), `predict${extra}: the used suffix is marked: ${JSON.stringify(suffix)}`);
  }
  check(await page.locator('#predict-out .profile tbody tr').count() > 0, 'the n-gram profile is shown');
  // controls change the query: pick n-gram with the keyboard-free API of the form
  await page.selectOption('#predict-form select[name=model]', 'ngram');
  await page.fill('#predict-form input[name=n]', '2');
  await page.locator('#predict-form button[type=submit]').click();
  await page.waitForFunction(() => location.hash.includes('model=ngram') && location.hash.includes('n=2'));
  await page.waitForFunction(() => document.querySelector('#predict-out dl.stats') && document.querySelector('#predict-out dl.stats').textContent.includes('2-gram'));
  check(true, 'the model controls choose the model');

  // ---- generate: streamed text equals the API's, shaded by effective n, explain on click
  await visit(`/#/generate?dataset=${BIG}&q=ROMEO%3A&max=60&t=0.8&seed=5&model=interp&k=2`);
  await page.waitForFunction(() => /finished/.test(document.querySelector('#p-generate .status').textContent), null, { timeout: 20000 });
  const g = await api('/v1/completions', { model: BIG, prompt: 'ROMEO:', max_tokens: 60, temperature: 0.8, seed: 5, interp: 2 });
  const chars = await page.locator('#generated .ch').allInnerTexts();
  const shown = chars.map((ch) => (ch === '↵\n' || ch === '↵' ? '\n' : ch)).join('');
  check(shown === g.choices[0].text, `streamed text == /v1/completions: ${JSON.stringify(shown)} vs ${JSON.stringify(g.choices[0].text)}`);
  const classes = await page.locator('#generated .ch').evaluateAll((els) => els.map((e) => e.className));
  const titles = await page.locator('#generated .ch').evaluateAll((els) => els.map((e) => e.title));
  check(classes.length === 60 && titles.every((t) => /^effective n \d+$/.test(t)) && new Set(classes).size > 1,
    `every character shaded by its effective n: ${[...new Set(classes)]}`);
  await page.locator('#generated .ch').nth(10).click();
  await page.locator('#explain table.bars').first().waitFor({ timeout: 10000 });
  const ex = await api('/v1/explain', { dataset: BIG, query: 'ROMEO:' + [...g.choices[0].text].slice(0, 10).join(''), top: 5, positions: 3, interp: 2 });
  const exSyms = await page.locator('#explain tr.cand td.sym').count();
  check(exSyms === ex.candidates.length && (await page.locator('#explain tr.cand.chosen').count()) === 1,
    `explain lists the candidates (${exSyms} vs ${ex.candidates.length}) with the chosen one`);
  const h3 = await text('#explain h3');
  check(h3.includes(`effective n ${ex.effective_n})`) && num(await text('#explain dd.effective-n')) === ex.effective_n,
    `the streamed effective n of the character agrees with /v1/explain (${h3} vs ${ex.effective_n})`);
  await page.locator('#explain ol.sources li').first().waitFor({ timeout: 10000 });
  check(await page.locator('#explain ol.sources li .snippet mark.hit').count() > 0, 'explain shows source snippets with the character marked');
  // the same from the keyboard: focus the text, Home, two steps right, Enter explains the third character
  await page.locator('#generated').focus();
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#explain h3') && document.querySelector('#explain h3').textContent.includes('character 3,'));
  check((await page.locator('#generated .ch.sel').getAttribute('data-i')) === '2', 'arrows and Enter explain a character from the keyboard');

  // ---- trace: spans, novelty, sources with snippets, the document viewer
  const traced = 'I saw the cat sat on the mat. Then <script>alert(1)</script> &amp; more words nobody wrote.';
  await visit(`/#/trace?dataset=${SMALL}&q=${encodeURIComponent(traced)}&min_len=6`);
  await page.locator('#traced').waitFor({ timeout: 10000 });
  const s = await api('/v1/spans', { dataset: SMALL, query: traced, min_len: 6, positions: 5 });
  check(num(await text('#span-count')) === s.spans.length && s.spans.length >= 2, `spans shown == /v1/spans (${s.spans.length})`);
  const nov = await text('#novelty');
  check(nov === (100 * s.novelty.uncovered_fraction).toFixed(1) + '%', `novelty ${nov} == /v1/spans ${s.novelty.uncovered_fraction}`);
  check((await text('#traced')) === traced && (await page.locator('#traced mark').count()) >= s.spans.length, 'the traced text is shown with its spans marked');
  await page.locator('#traced mark').first().hover();
  await page.locator('#span-sources ol.sources li').first().waitFor({ timeout: 10000 });
  check((await page.locator('#span-sources ol.sources li').first().innerText()).includes(s.spans[0].sources[0].name.split('/').pop()),
    'hovering a span lists its sources');
  check(await page.locator('#span-sources .snippet mark.hit').count() > 0, 'sources come with snippets');
  // sources ranked by relevance when the server offers it: score shown, best first
  const ref = await api('/v1');
  const ranked = ref.endpoints.find((e) => e.path === '/v1/spans').fields.some((f) => f.name === 'rank');
  if (ranked) {
    const scores = (await page.locator('#span-sources ol.sources').first().locator('.score').allInnerTexts()).map((x) => Number(x.replace(/[^0-9.e+-]/g, '')));
    check(scores.length > 0 && scores.every((x, i) => i === 0 || scores[i - 1] >= x), `ranked sources show their scores, best first: ${scores}`);
  } else {
    check(await page.locator('#span-sources .score').count() === 0, 'no score is shown when the server does not rank');
  }
  const scriptSpan = s.spans.findIndex((x) => x.text.includes('<script>'));
  check(scriptSpan >= 0, 'the markup is a span of its own');
  if (scriptSpan >= 0) {
    await page.locator('.span-btn').nth(scriptSpan).click();
    await page.locator('#span-sources h3').first().waitFor();
    await page.waitForFunction(() => document.querySelector('#span-sources h3').textContent.includes('<script>'));
    await page.locator('#span-sources ol.sources li').first().click();
    await page.locator('#viewer-text mark').first().waitFor({ timeout: 10000 });
    const marked = await page.locator('#viewer-text mark').allInnerTexts();
    check(marked.join('').includes('<script>alert(1)</script>'), `the document viewer marks the traced spans: ${JSON.stringify(marked)}`);
    await page.keyboard.press('Escape');
  }
  check(dialogs === 0, 'still no dialog');

  // a span that starts inside a character (Ω and é end in the same byte) comes as text_hex:
  // it is listed like any other, and the page raises no error (the end of the test checks)
  const torn = 'XΩ naïve — the';
  await visit(`/#/trace?dataset=${SMALL}&q=${encodeURIComponent(torn)}&min_len=6`);
  await page.locator('#traced').waitFor({ timeout: 10000 });
  const ts = await api('/v1/spans', { dataset: SMALL, query: torn, min_len: 6 });
  check(ts.spans.some((x) => x.text_hex), `the torn span comes as text_hex: ${JSON.stringify(ts.spans)}`);
  await page.waitForFunction((n) => document.querySelectorAll('#p-trace li').length >= n, ts.spans.length, { timeout: 10000 });
  check((await page.locator('#p-trace li').count()) >= ts.spans.length, 'every span is listed, the torn one too');

  // ---- a 1,000-byte trace on the larger corpus: time to spans on screen, then to sources
  const verbatim = (await api('/v1/doc', { dataset: BIG, query: 0, range: '200000:200600' })).text;
  let long = verbatim + ' Then a sentence that nobody in the corpus ever wrote, with words from far outside it. ';
  while (utf8(long) < 1000) long += 'More new words about servers and suffix arrays. ';
  long = Buffer.from(long).subarray(0, 1000).toString().replace(/\uFFFD+$/, '');
  const t0 = Date.now();
  await visit(`/#/trace?dataset=${BIG}&q=${encodeURIComponent(long)}&min_len=10`);
  await page.locator('#traced mark').first().waitFor({ timeout: 10000 });
  const tSpans = Date.now() - t0;
  await page.locator('#traced mark').first().click();
  await page.locator('#span-sources ol.sources li .snippet').first().waitFor({ timeout: 10000 });
  const tSources = Date.now() - t0;
  const pageSays = await text('#p-trace .status');
  console.log(`trace of ${utf8(long)} bytes on ${BIG}: spans on screen ${tSpans} ms, first span's sources ${tSources} ms (page: ${pageSays})`);
  check(tSources < 3000, `a 1,000-byte trace with its sources on screen within 3 s (${tSources} ms)`);

  // ---- search
  const sq = '"cat" AND ("mat" OR "log")';
  await visit(`/#/search?dataset=${SMALL}&q=${encodeURIComponent(sq)}`);
  await page.locator('#search-total').waitFor({ timeout: 10000 });
  const sr = await api('/v1/search', { dataset: SMALL, query: sq, limit: 10 });
  check(num(await text('#search-total')) === sr.documents_total && (await page.locator('#search-docs tbody tr').count()) === sr.documents.length,
    `search total and documents == /v1/search (${sr.documents_total})`);
  await page.locator('#search-docs tbody tr').first().click();
  await page.locator('#viewer-text mark').first().waitFor({ timeout: 10000 });
  check(['cat', 'mat', 'log'].includes(await text('#viewer-text mark')), 'a search result opens its document with the terms marked');
  await page.keyboard.press('Escape');

  // ---- keyboard only: Tab to the count box, type, Enter
  await visit(`/#/count?dataset=${SMALL}`);
  await page.locator('#count-q').waitFor();
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  let tabs = 0;
  while (tabs < 40 && !(await page.evaluate(() => document.activeElement && document.activeElement.id === 'count-q'))) {
    await page.keyboard.press('Tab');
    tabs++;
  }
  check(tabs < 40, `Tab reaches the count box (${tabs} presses)`);
  await page.keyboard.type('sat on');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#count-out q') && document.querySelector('#count-out q').textContent === 'sat on');
  a = await api('/v1/count', { dataset: SMALL, query: 'sat on' });
  check(num(await text('#count-value')) === a.count && decodeURIComponent(page.url()).includes('q=sat+on'), 'a keyboard-only count, and its URL');
  // on to the first concordance row, Enter opens the document, Escape closes it
  tabs = 0;
  while (tabs < 20 && !(await page.evaluate(() => document.activeElement && document.activeElement.classList.contains('kwic-row')))) {
    await page.keyboard.press('Tab');
    tabs++;
  }
  await page.keyboard.press('Enter');
  await page.locator('#viewer-text mark.hit').first().waitFor({ timeout: 10000 });
  check(tabs < 20 && (await text('#viewer-text mark.hit')) === 'sat on', 'Tab reaches a concordance row and Enter opens it');
  await page.keyboard.press('Escape');
  check(await page.evaluate(() => document.activeElement.classList.contains('kwic-row')), 'closing the document gives focus back to the row');
  await page.keyboard.press('4');
  await page.waitForFunction(() => location.hash.startsWith('#/generate'));
  // the panel is shown by the hash change's handler, a moment after the hash itself changes
  const panelShown = await page.locator('#p-generate').waitFor({ state: 'visible', timeout: 5000 }).then(() => true, () => false);
  check(panelShown, 'a number key switches panels');

  // ---- a shared URL gives the same result
  await visit(`/#/count?dataset=${BIG}&q=the+LORD`);
  await page.waitForFunction(() => document.querySelector('#count-out q') && document.querySelector('#count-out q').textContent === 'the LORD');
  a = await api('/v1/count', { dataset: BIG, query: 'the LORD' });
  check(num(await text('#count-value')) === a.count, 'a shared URL reproduces the count');

  // ---- screenshots, phone width, dark theme
  fs.mkdirSync(SHOTS, { recursive: true });
  await visit(`/#/count?dataset=${BIG}&q=ROMEO`);
  await page.locator('#kwic').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'explorer-count-1280x800.png') });
  await visit(`/#/trace?dataset=${BIG}&q=${encodeURIComponent('ROMEO:\nBut soft, what light through yonder window breaks? It is the east, and Juliet is the sun. Arise, fair sun.')}&min_len=10`);
  await page.locator('#traced mark').first().waitFor();
  await page.locator('#traced mark').nth(1).hover();
  await page.locator('#span-sources ol.sources li').first().waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'explorer-trace-1280x800.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await visit(`/#/count?dataset=${BIG}&q=ROMEO`);
  await page.locator('#kwic').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  check(overflow <= 391, `no sideways scrolling at phone width (${overflow} px)`);
  await page.screenshot({ path: path.join(SHOTS, 'explorer-count-390x844.png') });
  // every panel fits the phone's width (wide tables scroll inside themselves)
  for (const [hash, sel] of [[`/#/datasets?dataset=${BIG}`, '#datasets-table'],
    [`/#/search?dataset=${BIG}&q=${encodeURIComponent('"Romeo" AND ("Juliet" OR "Tybalt")')}`, '#search-docs'],
    [`/#/trace?dataset=${BIG}&q=${encodeURIComponent('But soft, what light through yonder window breaks?')}`, '#traced mark'],
    [`/#/generate?dataset=${BIG}&q=ROMEO%3A&max=80&seed=2`, '#generated .ch']]) {
    await visit(hash);
    await page.locator(sel).first().waitFor({ timeout: 10000 });
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    check(w <= 391, `${hash.split('?')[0]} fits 390 px (${w} px)`);
  }
  await visit(`/#/predict?dataset=${BIG}&q=What+say`);
  await page.locator('#predict-out tr.cand').first().waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'explorer-predict-390x844.png'), fullPage: true });
  const light = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  check(light !== dark, `the system's dark preference gives the dark theme (${light} vs ${dark})`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: path.join(SHOTS, 'explorer-predict-dark-1280x800.png') });

  check(problems.length === 0, `no script error or CSP violation: ${problems.join(' | ')}`);
  check(foreign.length === 0, `the page talks only to its origin: ${foreign}`);
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
  console.log(`web: ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('FAIL:', e); console.log(`web: ${passed} passed, ${failed + 1} failed`); process.exit(1); });
