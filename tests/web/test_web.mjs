// test_web.mjs — the browser build in Debian's headless Chromium (make test-web;
// tests/web/test_web.sh prepares the native answers in EXPECT and runs this).
//
//   node test_web.mjs SITE EXPECT
//
// Serves SITE (build/web) on 127.0.0.1, then, as a student would: opens the page,
// waits for the first frame, compares the page's numbers with the desktop's
// (--dump, --describe: byte for byte), steps through every stage of the classic
// lesson, hovers a cell, makes a what-if edit and saves it (Ctrl+S: a download,
// and in the picker's folder after a reload), saves a frame (S) and compares it
// and a screenshot with the native export of the same frame (within 2/255 per
// channel), switches to Chinese (the font arrives on demand), answers a study
// question and finds the progress after a reload, drops lesson files as a browser
// delivers them (a DataTransfer on a drop event: they open, a broken one gives the
// desktop's one-line error and the lesson on screen stays; no copy is kept but the
// lesson on screen's), opens links to a stage (the address bar follows the window:
// a reload comes back there), keeps two lessons of the same file name apart in the
// study progress, refuses a lesson that a redirect brings from another site, explains
// a mistyped link in plain words with links to the lessons, and never ends on a key; the
// learning views of the induction lesson as the desktop computes them: the backward view
// (Ctrl+B), compare (Ctrl+D) and training live (R; 20 steps equal --train 20's file);
// then the accessibility checks of a11y_web.mjs (axe-core, the layer, the keyboard, motion, zoom)
// and touch_web.mjs's (touch at a tablet's and a phone's size, offline), and present_web.mjs's
// (the presenter as a second browser window, F5, in step with the page both ways) and
// type_web.mjs's (typing on a phone: a real field for its keyboard), and lazy_web.mjs's (the
// lessons fetched when opened: none on the first visit, exactly the one opened, every one
// equal to the desktop's --dump, a missing one said in one line).
import { chromium } from 'playwright-core';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { accessibility } from './a11y_web.mjs';
import { touchAndOffline } from './touch_web.mjs';
import { exportsInPage } from './export_web.mjs';
import { presenterWindow } from './present_web.mjs';
import { typing } from './type_web.mjs';
import { lazyLessons } from './lazy_web.mjs';

const [site, expect] = process.argv.slice(2).map((p) => path.resolve(p));
let fails = 0;
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) fails++;
}
const types = {'.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json'};
// Two lessons of the same file name in two folders (issue 36, 8): the classic, and the
// classic with another title and another first input (the same questions, other answers)
const classic = JSON.parse(fs.readFileSync('lessons/arange-2x4x4.json', 'utf8'));
const course = {
  '/course1/lesson.json': JSON.stringify(classic),
  '/course2/lesson.json': JSON.stringify({...classic, title: 'Course 2: another lesson of the same file name'}),
};
// another site (another origin: another port) that lets any site read its lesson
const other = http.createServer((req, res) => {
  res.writeHead(200, {'content-type': 'application/json', 'access-control-allow-origin': '*'});
  res.end(JSON.stringify({...classic, title: 'from another site'}));
});
await new Promise((r) => other.listen(0, '127.0.0.1', r));
const otherSite = `http://127.0.0.1:${other.address().port}`;
const overrides = {}; // a file of the site served as another text (touch_web.mjs: a new build's sw.js)
// lazy_web.mjs: every request answered (path + query), paths answered 404, paths answered after 1.5 s
const served = [], gone = new Set(), slow = new Set();
const server = http.createServer(async (req, res) => {
  const u = new URL(req.url, 'http://x'), rel = decodeURIComponent(u.pathname);
  served.push(u.pathname + u.search);
  if (gone.has(rel)) { res.writeHead(404); res.end(); return; }
  if (slow.has(rel)) await new Promise((r) => setTimeout(r, 1500));
  if (overrides[rel] !== undefined) { res.writeHead(200, {'content-type': 'text/javascript'}); res.end(overrides[rel]); return; }
  if (rel === '/go') { res.writeHead(302, {location: u.searchParams.get('to')}); res.end(); return; } // an open redirect
  if (course[rel]) { res.writeHead(200, {'content-type': 'application/json'}); res.end(course[rel]); return; }
  // /extra/NAME: the repository's lessons, as a lesson file on the same site
  const root = rel.startsWith('/extra/') ? path.resolve('lessons') : site;
  const file = path.join(root, rel.startsWith('/extra/') ? rel.slice(7) : rel.endsWith('/') ? rel + 'index.html' : rel);
  if (!file.startsWith(root)) { res.writeHead(403); res.end(); return; }
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, {'content-type': types[path.extname(file)] || 'application/octet-stream'});
    res.end(data);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;

// PNG (8-bit RGB or RGBA, not interlaced) → {w, h, rgba}
function readPng(buf) {
  let off = 8, w = 0, h = 0, type = 0;
  const idat = [];
  while (off < buf.length) {
    const n = buf.readUInt32BE(off), tag = buf.toString('latin1', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + n);
    if (tag === 'IHDR') { w = body.readUInt32BE(0); h = body.readUInt32BE(4); type = body[9]; }
    if (tag === 'IDAT') idat.push(body);
    off += 12 + n;
  }
  const bpp = type === 6 ? 4 : 3, raw = zlib.inflateSync(Buffer.concat(idat)), stride = w * bpp;
  const out = Buffer.alloc(w * h * 4), prev = Buffer.alloc(stride), cur = Buffer.alloc(stride);
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      let v = line[i];
      if (f === 1) v += a; else if (f === 2) v += b; else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      cur[i] = v & 255;
    }
    for (let x = 0; x < w; x++) for (let k = 0; k < 4; k++) out[(y * w + x) * 4 + k] = k < bpp ? cur[x * bpp + k] : 255;
    cur.copy(prev);
  }
  return {w, h, rgba: out};
}
// the largest difference of a channel (RGB), and how many pixels differ by more than 2; skip:
// a rectangle [x, y, w, h] left out; edge: that many pixels at the edges left out too
function maxDiff(a, b, skip, edge = 0) {
  if (a.w !== b.w || a.h !== b.h) return {max: 255, over: -1};
  let max = 0, over = 0;
  for (let i = 0; i < a.rgba.length; i += 4) {
    const x = (i / 4) % a.w, y = Math.floor(i / 4 / a.w);
    if (skip && x >= skip[0] && x < skip[0] + skip[2] && y >= skip[1] && y < skip[1] + skip[3]) continue;
    if (x < edge || y < edge || x >= a.w - edge || y >= a.h - edge) continue;
    let m = 0;
    for (let k = 0; k < 3; k++) m = Math.max(m, Math.abs(a.rgba[i + k] - b.rgba[i + k]));
    max = Math.max(max, m);
    if (m > 2) over++;
  }
  return {max, over};
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({viewport: {width: 1280, height: 720}, deviceScaleFactor: 1, acceptDownloads: true});
const page = await context.newPage();
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(e.message));
const state = () => page.evaluate(() => attnviz.state());
async function open(query) {
  await page.goto(base + 'index.html' + (query ? '?' + query : ''));
  await page.waitForFunction(() => window.attnviz !== undefined);
  return page.evaluate(() => attnviz.ready);
}
async function settled(timeout = 15000) { // nothing moving, no notice
  try {
    await page.waitForFunction(() => { const s = attnviz.state(); return s && !s.busy; }, null, {timeout, polling: 50});
  } catch (e) {
    throw new Error('never settled: ' + JSON.stringify(await state()));
  }
  return state();
}
// A key, and the frame after the window handled it (then nothing moving).
async function press(key) {
  // every key of a chord goes down and up (Control+d: 4 events; a letter adds its text event):
  // wait for all of them, not only the first (a Control down alone once let the check run early)
  const n = (await state()).events + 2 * key.split('+').length - 1;
  await page.keyboard.press(key);
  try {
    await page.waitForFunction((k) => attnviz.state().events > k, n, {timeout: 5000, polling: 20});
  } catch (e) {
    throw new Error(`${key} was not handled: ` + JSON.stringify(await state()));
  }
  const now = await state();
  if (now.study.on) { // (a hidden result holds its stage's animation: never "settled")
    await page.waitForFunction((f) => attnviz.state().frames > f, now.frames, {timeout: 5000, polling: 20});
    return state();
  }
  return settled();
}
async function typeKeys(text) { for (const c of text) await press(c); }
// The expected-answers folder's lesson NAME dropped on the page as a browser delivers
// a file (a DataTransfer holding a File, on a drop event); the page's error list
// emptied first. Resolves once it opened or an error line came.
async function dropLesson(name, bytes = fs.readFileSync(path.join(expect, name))) {
  const before = (await state()).lesson;
  await page.evaluate(([n, b]) => {
    attnviz.errors.length = 0;
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(b)], n, {type: 'application/json'}));
    document.getElementById('canvas').dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
  }, [name, [...bytes]]);
  await page.waitForFunction((l) => attnviz.state().lesson !== l || attnviz.errors.length > 0, before, {timeout: 10000})
    .catch(() => {});
  return state();
}
// The dropped files' copies in the page's memory (/tmp/drop…/NAME).
const dropCopies = () => page.evaluate(() => Module.FS.readdir('/tmp').filter((n) => n.startsWith('drop'))
  .flatMap((d) => Module.FS.readdir('/tmp/' + d).filter((f) => f[0] !== '.').map((f) => '/tmp/' + d + '/' + f)));
async function download(action) {
  const [d] = await Promise.all([page.waitForEvent('download', {timeout: 10000}), action()]);
  return {name: d.suggestedFilename(), data: fs.readFileSync(await d.path())};
}

// The learning views of the induction lesson (issue 38, 5; issue 41, 1), against the desktop's
// answers for the same lesson: the backward view (Ctrl+B, and the layer's button), training live
// (R: pause and resume; attnviz.train(20) and Ctrl+S's download against --train 20), compare
// (Ctrl+D / Ctrl+Shift+D) against --compare.
async function learning() {
  const want = (name) => fs.readFileSync(path.join(expect, name), 'utf8');
  // ---- the backward view: Ctrl+B ---------------------------------------------------------
  let s = await open('lesson=induction-heads');
  await settled();
  s = await press('Control+b');
  check(s.backward && s.stage === 'grad.target', `Ctrl+B: the backward view, at its first stage (${s.backward}, ${s.stage} of ${s.stages})`);
  const bwDesc = await page.evaluate(() => attnviz.describe(1280, 720));
  check(bwDesc === want('bw-describe.json'), 'Ctrl+B: attnviz.describe(1280, 720) equals --describe --backward --size 1280x720, byte for byte');
  const bwPage = JSON.parse(await page.evaluate(() => attnviz.dump())).stages, bwNative = JSON.parse(want('bw-dump.json')).stages;
  // (the view's stages: every gradient --dump --backward writes of an activation and those of
  // the weights the view shows; its own are the targets and each layer's softmax Jacobian row)
  const byName = new Map(bwNative.map((t) => [t.name, t]));
  const grads = bwPage.filter((t) => t.name.startsWith('grad.'));
  const own = grads.filter((t) => !byName.has(t.name)).map((t) => t.name);
  const same = grads.filter((t) => byName.has(t.name) && JSON.stringify(byName.get(t.name).shape) === JSON.stringify(t.shape) &&
                                   JSON.stringify(byName.get(t.name).data) === JSON.stringify(t.data));
  check(same.length > 40 && same.length + own.length === grads.length && own.every((n) => /^grad\.(target|l\d+\.jacobian)$/.test(n)),
        `Ctrl+B: the page's gradient stages are --dump --backward's numbers, byte for byte (${same.length} of ${grads.length}; the view's own: ${own.join(', ')})`);
  s = await press('ArrowRight');
  await page.waitForFunction((st) => { const a = attnviz.a11y(); return a.stage === st && document.getElementById('a11y-title').textContent === a.title; },
                             s.stage, {timeout: 5000, polling: 50}).catch(() => {});
  const bwLayer = await page.evaluate(() => ({a: attnviz.a11y(), title: document.getElementById('a11y-title').textContent,
                                              tables: document.querySelectorAll('#a11y-tables table').length}));
  check(s.stage === 'grad.logits' && bwLayer.a.stage === 'grad.logits' && bwLayer.title === bwLayer.a.title && bwLayer.tables > 0 &&
        bwLayer.a.panels.length === bwLayer.tables && /p − y|softmax/.test(bwLayer.a.formula + bwLayer.a.narration),
        `the accessible layer reads the backward stages (${bwLayer.a.stage}: “${bwLayer.title}”, ${bwLayer.tables} tables, “${bwLayer.a.formula}”)`);
  s = await page.evaluate(async () => {
    const b = [...document.querySelectorAll('#a11y-controls button')].find((x) => /Backward/.test(x.textContent));
    if (!b) return null;
    const n = attnviz.state().events;
    b.click();
    for (let i = 0; i < 100 && attnviz.state().events <= n; i++) await new Promise((r) => setTimeout(r, 20));
    return attnviz.state();
  });
  check(s && !s.backward && !s.stage.startsWith('grad.'), `the layer's “Backward view on / off” button: off again (${s && s.backward}, ${s && s.stage})`);

  // ---- compare: Ctrl+D, Ctrl+Shift+D ------------------------------------------------------
  s = await press('Control+d');
  const cmpDesc = JSON.parse(want('cmp-describe.json'));
  check(s.compare && s.compare.spec === 'ablate:l0.h0' && s.compare.summary === cmpDesc.summary &&
        s.compare.identical === cmpDesc.n_identical && s.compare.differ === cmpDesc.n_differ,
        `Ctrl+D: B = layer 0's head 0 zeroed, the summary line as --compare's (“${s.compare && s.compare.summary.slice(0, 80)}…”)`);
  check(await page.evaluate(() => attnviz.compare(true)) === want('cmp-dump.json'),
        'Ctrl+D: attnviz.compare(true) equals --compare ablate:l0.h0 --dump (every Δ tensor), byte for byte');
  check(await page.evaluate(() => attnviz.compare(false)) === want('cmp-describe.json'),
        'Ctrl+D: attnviz.compare(false) equals --compare ablate:l0.h0 --describe, byte for byte');
  for (let i = 0; i < 40 && s.stage !== 'probs'; i++) s = await press('ArrowRight');
  const delta = await page.evaluate(() => attnviz.a11y().panels.map((p) => p.title));
  check(delta.length === 3 && /Δ/.test(delta[2]), `the Δ frame of ${s.stage}: A, B and Δ = B − A (${delta.join(', ')})`);
  s = await press('l');
  await page.waitForFunction(() => attnviz.state().lang === 'zh', null, {timeout: 20000}).catch(() => {});
  s = await press('Control+d');
  check(s.lang === 'zh' && s.compare && s.compare.spec === 'ablate:l0.h1' &&
        (await page.evaluate(() => attnviz.compare(false))) === want('cmp-describe-zh.json'),
        `Ctrl+D again, in Chinese: head 1, as --compare ablate:l0.h1 --describe --lang zh (“${s.compare && s.compare.summary.slice(0, 40)}…”)`);
  s = await press('Control+Shift+D');
  s = await press('Control+Shift+D');
  check(s.compare === null && (await page.evaluate(() => attnviz.compare(false))) === null,
        `Ctrl+Shift+D back past the first head: compare off (${JSON.stringify(s.compare)})`);
  s = await press('l');

  // ---- training live: R, pause and resume -------------------------------------------------
  s = await open('lesson=induction-heads');
  await settled();
  const beforeTrain = await page.screenshot();
  await page.keyboard.press('r');
  await page.waitForFunction(() => { const t = attnviz.state().train; return t && t.step >= 3; }, null, {timeout: 30000, polling: 50}).catch(() => {});
  const shotA = await page.screenshot();
  s = await press('r');
  const paused = s.train;
  await page.waitForTimeout(600);
  s = await state();
  check(paused && !paused.running && paused.step >= 3 && s.train.step === paused.step && !beforeTrain.equals(shotA),
        `R trains between frames (the model view drawn), R again pauses it (step ${paused && paused.step} of ${paused && paused.total}, still ${s.train && s.train.step} after 0.6 s)`);
  await page.keyboard.press('r');
  await page.waitForFunction((n) => { const t = attnviz.state().train; return t && t.step > n; }, paused.step, {timeout: 30000, polling: 50}).catch(() => {});
  s = await press('Escape');
  check(s.train && !s.train.running && s.train.step > paused.step && s.train.loss > 0,
        `R goes on from there, Esc pauses (step ${s.train && s.train.step}, loss ${s.train && s.train.loss})`);
  const pausedShot = await page.screenshot();
  s = await press('Shift+R');
  const stepShot = await page.screenshot();
  s = await press('Shift+R');
  check(!stepShot.equals(pausedShot) && (await page.screenshot()).equals(pausedShot) && !s.train.running,
        'Shift+R: the last optimizer step drawn over the frame, Shift+R again closes it');
  // ---- 20 steps in the page are --train 20's, byte for byte --------------------------------
  s = await open('lesson=induction-heads');
  await settled();
  check(await page.evaluate(() => attnviz.train(20)) === 1, 'attnviz.train(20): started');
  await page.waitForFunction(() => { const t = attnviz.state().train; return t && !t.running; }, null, {timeout: 120000, polling: 100}).catch(() => {});
  s = await state();
  check(s.train && s.train.step === 20 && (await page.evaluate(() => attnviz.dump())) === want('train20.dump.json'),
        `20 steps of R's training in the page: dump() equals --dump of --train 20's lesson, byte for byte (step ${s.train && s.train.step}, loss ${s.train && s.train.loss})`);
  const trained = await download(() => page.keyboard.press('Control+s'));
  check(trained.name.endsWith('.json') && trained.data.equals(fs.readFileSync(path.join(expect, 'train20.json'))),
        `Ctrl+S after training: the download (${trained.name}) is --train 20 --save's file, byte for byte (weights and checkpoints)`);
  s = await settled();
}

try {
  // ---- the first frame, and the numbers are the desktop's ----------------------------
  const t0 = Date.now();
  let s = await open('');
  check(s.frames >= 1 && s.stage === 'input', `first frame (${Date.now() - t0} ms, stage ${s.stage})`);
  const dump = await page.evaluate(() => attnviz.dump());
  check(dump === fs.readFileSync(path.join(expect, 'dump.json'), 'utf8'), 'attnviz.dump() equals the desktop --dump, byte for byte');
  const desc = await page.evaluate(() => attnviz.describe(1280, 720));
  check(desc === fs.readFileSync(path.join(expect, 'describe.json'), 'utf8'), 'attnviz.describe(1280, 720) equals --describe --size 1280x720');
  // the model view keeps the head on screen (its heading names it): described with that head
  await open('head=1');
  s = await press('a');
  const mv = await page.evaluate(() => attnviz.describe(1280, 720));
  check(s.head === 1 && mv === fs.readFileSync(path.join(expect, 'describe-model.json'), 'utf8'),
        `A at head ${s.head}: attnviz.describe(1280, 720) equals --describe --model-view --head 1`);
  s = await open('');

  // ---- every stage of the classic lesson ---------------------------------------------
  const names = JSON.parse(dump).stages.map((x) => x.name);
  let seen = [s.stage];
  for (let i = 1; i < names.length; i++) {
    s = await press('ArrowRight');
    seen.push(s.stage);
  }
  check(JSON.stringify(seen) === JSON.stringify(names), `→ steps through every stage (${seen.length}: ${seen.join(' ')})`);

  // ---- hover a cell: the tooltip's cell is reported and drawn -------------------------
  s = await press('Home');
  const before = await page.screenshot();
  let hovered = null;
  for (let y = 200; y < 600 && !hovered; y += 37)
    for (let x = 300; x < 1000 && !hovered; x += 41) {
      await page.mouse.move(x, y);
      await page.waitForTimeout(20);
      const h = (await state()).hover;
      if (h) hovered = {x, y, h};
    }
  check(hovered !== null, `hover finds a cell${hovered ? ` (panel ${hovered.h.panel}, row ${hovered.h.row}, col ${hovered.h.col} at ${hovered.x},${hovered.y})` : ''}`);
  const after = await page.screenshot();
  check(!before.equals(after), 'hovering draws the tooltip (the frame changed)');
  await page.mouse.move(5, 715);

  // ---- a what-if edit: input[0,0,0] = 5; every stage recomputed -----------------------
  s = await state();
  await press('Enter');                   // select the first editable cell
  await typeKeys('5');
  s = await press('Enter');               // apply
  // (the edit is applied in the page's frame loop: wait for it, up to 5 s, then check)
  await page.waitForFunction(() => attnviz.state().edited, null, {timeout: 5000, polling: 20}).catch(() => {});
  s = await state();
  const edited = JSON.parse(await page.evaluate(() => attnviz.dump()));
  check(s.edited && edited.stages[0].data[0] === 5, `what-if: the first input cell is 5 (state.edited ${s.edited})`);
  check(JSON.stringify(edited.stages.at(-1).data) !== JSON.stringify(JSON.parse(dump).stages.at(-1).data),
        'what-if: the output changed with it');
  await press('Escape');                  // (nothing to cancel: on the desktop Esc would quit)
  check((await state()) !== null, 'Esc does not end the session in the page');
  const lessonDl = await download(() => page.keyboard.press('Control+s'));
  check(lessonDl.name.endsWith('.json') && JSON.parse(lessonDl.data).input !== undefined,
        `Ctrl+S: the edited lesson downloads (${lessonDl.name})`);
  s = await settled();

  // ---- S: the frame as a download, equal to the native export and to a screenshot -----
  s = await press('Control+r');            // back to the original lesson
  for (let i = 0; i < names.indexOf('attn'); i++) s = await press('ArrowRight');
  check(s.stage === 'attn', `at stage attn (${s.stage})`);
  // (attn·V's narration is about head 1, so the walk above left the window on head 1; the
  // native export opens attn on head 0)
  for (let i = 0; i < 4 && s.head !== 0; i++) s = await press('Tab');
  check(s.head === 0, `Tab back to head 0 (${s.head})`);
  const frameDl = await download(() => page.keyboard.press('s'));
  const left = await page.evaluate(() => Module.FS.readdir('/home/web_user/attnviz').filter((n) => n.endsWith('.png')));
  check(left.length === 0, `S: the frame is not kept in the page's memory after its download (${left})`);
  const native = readPng(fs.readFileSync(path.join(expect, 'attn.png')));
  const saved = readPng(frameDl.data);
  const shotDir = process.env.ATTNVIZ_WEB_SHOTS; // (to look at: the frames compared)
  if (shotDir) fs.writeFileSync(path.join(shotDir, 'page-S-attn.png'), frameDl.data);
  let d = maxDiff(saved, native);
  check(d.over === 0, `S: ${frameDl.name} equals the native export of the frame (largest difference ${d.max}/255)`);
  s = await settled();
  const shotPng = await page.screenshot();
  if (shotDir) fs.writeFileSync(path.join(shotDir, 'page-attn.png'), shotPng);
  const shot = readPng(shotPng);
  // (the row of the window's buttons aside: exports leave them out, and the status
  // line beside them moves to the right edge)
  const row = [0, s.buttons[1], 1280, s.buttons[3]];
  d = maxDiff(shot, native, row, 3);
  check(d.over === 0 && s.buttons[3] > 0 && s.buttons[3] < 60,
        `a screenshot of the page equals the native export of the frame but for the buttons' row ${row} and the canvas's 3-px focus ring (largest difference ${d.max}/255, ${d.over} pixels over 2/255)`);

  // ---- Chinese: the font is fetched now, not before -----------------------------------
  const fontBefore = await page.evaluate(() => { try { Module.FS.stat('/attnviz/fonts/wqy-microhei.ttc'); return true; } catch (e) { return false; } });
  check(!fontBefore, 'the Chinese font is not loaded for an English visit');
  await page.keyboard.press('l');
  await page.waitForFunction(() => attnviz.state().lang === 'zh', null, {timeout: 20000});
  s = await settled();
  const zhFrame = await page.evaluate(() => attnviz.frame());
  check(/[\u4e00-\u9fff]/.test(zhFrame.narration), `L: Chinese, with the font fetched on demand (“${zhFrame.narration.slice(0, 20)}…”)`);
  if (shotDir) await page.screenshot({path: path.join(shotDir, 'page-zh.png')});
  s = await press('l');

  // ---- the study mode: answer a question, reload, the progress is there ---------------
  s = await press('Home');
  await press('t');
  s = await state();
  for (let i = 0; i < 12 && !s.study.asking; i++) s = await press('ArrowRight');
  check(s.study.asking, `study: a question is asked (${s.study.question})`);
  const ans = s.study.list ? s.study.answer.map((v) => Math.round(v)).join(', ')
                           : String(Math.round(s.study.answer[0] * 1e4) / 1e4);
  await typeKeys(ans);
  s = await press('Enter');
  check(s.study.answered === 1 && s.study.right === 1, `study: the answer ${ans} is right (${s.study.answered} answered)`);
  await press('t');                        // leave the study mode: the progress is written
  await page.evaluate(() => attnviz.sync());
  s = await open('');
  await page.keyboard.press('t');
  await page.waitForFunction(() => attnviz.state().study.on, null, {timeout: 5000});
  s = await state();
  check(s.study.answered >= 1, `study: after a reload the progress is there (${s.study.answered} answered)`);
  const savedLessons = await page.evaluate(() => Module.FS.readdir('/home/web_user/.local/share/attnviz/lessons'));
  check(savedLessons.some((n) => n.endsWith('.json')), `Ctrl+S's lesson is kept after a reload (${savedLessons.filter((n) => n.endsWith('.json'))})`);
  s = await press('t');

  // ---- lesson files dropped on the page (issue 36, 2) ------------------------------------
  const stay = await state();
  s = await dropLesson('big.json');
  check(s.lesson.endsWith('/big.json') && (await page.evaluate(() => attnviz.errors.length)) === 0,
        `a dropped lesson opens (${s.lesson}${await page.evaluate(() => attnviz.errors.join(' '))})`);
  const bigDump = await page.evaluate(() => attnviz.dump());
  check(bigDump === fs.readFileSync(path.join(expect, 'big.dump.json'), 'utf8'),
        'a 2×40×48 causal lesson (tiled products, attn·V to the last nonzero weight): dump() equals the desktop --dump, byte for byte');
  s = await dropLesson('edges.json');
  check(s.lesson.endsWith('/edges.json') && (await page.evaluate(() => attnviz.dump())) === fs.readFileSync(path.join(expect, 'edges.dump.json'), 'utf8'),
        `a 1×261×20 lesson at the page's tile edges (partial tiles, sums over two blocks): dump() equals the desktop --dump (${s.lesson})`);
  s = await dropLesson('big.json');
  let copies = await dropCopies();
  check(copies.length === 1 && copies[0] === s.lesson, `dropped: only the copy of the lesson on screen is kept (${copies})`);
  const bigAt = s.lesson;
  s = await dropLesson('lesson.json', Buffer.from(JSON.stringify(classic)));
  copies = await dropCopies();
  check(s.lesson.endsWith('/lesson.json') && copies.length === 1 && copies[0] === s.lesson,
        `a second drop: it opens, the first one's copy is removed (${copies})`);
  const onScreen = s;
  await dropLesson('broken.json');
  await page.waitForFunction(() => attnviz.errors.length > 0, null, {timeout: 5000});
  const errs = await page.evaluate(() => attnviz.errors.slice());
  const want = fs.readFileSync(path.join(expect, 'broken.err'), 'utf8').trim();
  const got = (errs[0] || '').replace(/\/tmp\/drop-[0-9a-f]{16}\//g, '/tmp/drop/');
  check(errs.length === 1 && got === want, `a broken lesson dropped: one line, the desktop's (“${errs[0]}”)`);
  s = await state();
  copies = await dropCopies();
  check(s.lesson === onScreen.lesson && s.stage === onScreen.stage && copies.length === 1 && copies[0] === s.lesson,
        `a broken lesson dropped: the lesson on screen stays, the broken copy is removed (${copies})`);
  check(bigAt.endsWith('/big.json') && stay.lesson !== bigAt, 'the drops: done');

  // ---- a link to a frame ---------------------------------------------------------------
  s = await open('lesson=arange-2x4x4&stage=attn&batch=1&head=1&lang=zh');
  check(s.lesson.endsWith('arange-2x4x4.json') && s.stage === 'attn' && s.batch === 1 && s.head === 1 && s.lang === 'zh',
        `?lesson=arange-2x4x4&stage=attn&batch=1&head=1&lang=zh opens there (${s.stage}, ${s.batch}, ${s.head}, ${s.lang})`);
  // ---- a trained language model: type a letter (I), every stage again; the model view (A) --------
  s = await open('lesson=induction-heads&stage=probs');
  await settled();
  await press('i');
  await press('z'); // "qkdmbxqkdmbx" + "z": 13 tokens, computed at once
  await press('Enter');
  const typed = JSON.parse(await page.evaluate(() => attnviz.dump()));
  const emb = typed.stages.find((t) => t.name === 'token_embed');
  s = await state();
  check(s.stage === 'probs' && emb && emb.shape[1] === 13,
        `I, then z: the induction lesson computed again for 13 tokens, at the same stage (${s.stage}, ${emb && emb.shape})`);
  const beforeMv = await page.screenshot();
  await press('a');
  check(!beforeMv.equals(await page.screenshot()), 'A: the model view replaces the panels');
  await learning();
  const shipped = await open('lesson=causal-decoder&projector=1');
  check(shipped.lesson.endsWith('causal-decoder.json'), `?lesson=causal-decoder&projector=1 opens it (${shipped.lesson})`);
  await page.goto(base + 'index.html?lesson=causal-decoder&batch=1');
  await page.waitForFunction(() => window.attnviz !== undefined);
  const why = await page.evaluate(() => attnviz.ready.then(() => 'opened', (e) => e.message));
  check(/--batch\/--head: .*causal-decoder.json has batches 0\.\.0/.test(why), `?batch=1 of a one-batch lesson: ready is rejected with the reason (“${why}”)`);
  const host = new URL(base).host;
  s = await open('lesson=extra/sentence-the-cat.json&stage=attn');
  check(s.lesson === `/url/${host}/extra/sentence-the-cat.json` && s.stage === 'attn', `?lesson=extra/sentence-the-cat.json: a lesson file on the same site (${s.lesson})`);
  // ---- a redirect may stay on the site, never leave it (issue 36, 9) ------------------
  s = await open('lesson=' + encodeURIComponent('go?to=/extra/sentence-the-cat.json'));
  check(s.lesson === `/url/${host}/extra/sentence-the-cat.json`, `a same-site redirect: the lesson it leads to, by its own address (${s.lesson})`);
  await page.goto(base + 'index.html?lesson=' + encodeURIComponent('go?to=' + otherSite + '/x.json'));
  await page.waitForFunction(() => window.attnviz !== undefined);
  const redirected = await page.evaluate(() => attnviz.ready.then(() => 'opened ' + attnviz.state().lesson, (e) => e.message));
  const redirectedWhy = await page.evaluate(() => document.querySelector('#status .why') && document.querySelector('#status .why').textContent);
  check(/another site/.test(redirected) && /another site/.test(redirectedWhy || ''),
        `?lesson=go?to=${otherSite}/x.json (an open redirect to another site) is refused (“${redirected}”; “${redirectedWhy}”)`);
  // ---- two lessons of the same file name keep their own progress (issue 36, 8) ----------
  s = await open('lesson=course1/lesson.json&study=1');
  for (let i = 0; i < 12 && !s.study.asking; i++) s = await press('ArrowRight');
  const ans1 = s.study.list ? s.study.answer.map((v) => Math.round(v)).join(', ')
                            : String(Math.round(s.study.answer[0] * 1e4) / 1e4);
  await typeKeys(ans1);
  s = await press('Enter');
  await press('t');
  await page.evaluate(() => attnviz.sync());
  check(s.study.answered === 1, `course1/lesson.json: one question answered (${s.study.answered})`);
  s = await open('lesson=course2/lesson.json&study=1');
  check(s.study.on && s.study.answered === 0,
        `course2/lesson.json, another lesson of the same file name: none answered (${s.study.answered} answered, ${s.study.right} right; ${s.lesson})`);
  s = await open('lesson=course1/lesson.json&study=1');
  check(s.study.answered === 1, `course1/lesson.json again: its answer is kept (${s.study.answered})`);
  await press('t');
  await page.goto(base + 'index.html?lesson=http://example.com/x.json');
  const away = await page.evaluate(() => attnviz.ready.then(() => 'opened', (e) => e.message));
  check(/must be on this site/.test(away), `?lesson= on another site is refused (“${away}”)`);
  await page.goto(base + 'index.html?stage=nosuch');
  await page.waitForFunction(() => !document.getElementById('status').hidden && document.querySelector('#status pre'), null, {timeout: 10000});
  const bad = await page.evaluate(() => document.querySelector('#status pre').textContent);
  check(/--stage: .* has no stage "nosuch"/.test(bad) && bad.split('\n').length === 1, `?stage=nosuch: one line on the page (“${bad}”)`);

  // ---- idle: nothing moves, nothing is drawn -----------------------------------------
  s = await open('');
  s = await settled();
  await page.waitForTimeout(1000);
  const idle = await state();
  check(idle.frames === s.frames, `idle: no frame drawn in a second with nothing moving (${idle.frames - s.frames})`);

  // ---- E: what the page makes (all the desktop's entries), the frames as one .zip (issue 35, 11;
  // SVG, PDF, the handout, the worksheet, GIF, MP4: export_web.mjs)
  await page.keyboard.press('e');
  await page.waitForFunction(() => attnviz.state().toast !== '', null, {timeout: 5000});
  s = await state();
  check(/1 PNG/.test(s.toast) && /2 PDF/.test(s.toast) && /7 PDF/.test(s.toast) && !/not in the browser/.test(s.toast),
        `E offers what the page makes: the desktop's entries (“${s.toast}”)`);
  if (shotDir) await page.screenshot({path: path.join(shotDir, 'page-E.png')});
  const zipDl = await download(() => page.keyboard.press('1'));
  check(zipDl.name.endsWith('.zip') && zipDl.data.readUInt32LE(0) === 0x04034b50 && zipDl.data.includes('frames.json'),
        `E 1: the PNG frames as one zip (${zipDl.name}, ${zipDl.data.length} bytes)`);
  s = await settled(20000);
  await page.keyboard.press('e');
  await page.waitForFunction(() => attnviz.state().toast !== '', null, {timeout: 5000});
  await page.keyboard.press('2');
  await page.waitForTimeout(500);
  s = await state();
  check(/Saved .*attnviz-handout-/.test(s.toast) && !/not in the browser|failed/.test(s.toast),
        `E 2: the handout is written, nothing refused (“${s.toast}”; its text: export_web.mjs)`);
  s = await settled();
  // F5: the presenter as a second browser window (present_web.mjs checks it in full)
  const [presenter] = await Promise.all([context.waitForEvent('page', {timeout: 10000}).catch(() => null), page.keyboard.press('F5')]);
  await page.waitForFunction(() => /Presenter window open/.test(attnviz.state().toast), null, {timeout: 5000})
    .then(() => check(presenter !== null, `F5 (presenter): a second window opened (${presenter ? presenter.url().replace(/.*\//, '').replace(/\?.*/, '') : 'none'}), “Presenter window open” said`),
          () => check(false, `F5: no presenter window (“${s.toast}”)`));
  if (presenter) await presenter.close();
  s = await settled();

  // ---- HiDPI and resizing: the canvas in device pixels -------------------------------
  const hi = await browser.newContext({viewport: {width: 800, height: 600}, deviceScaleFactor: 2});
  const hp = await hi.newPage();
  await hp.goto(base + 'index.html?stage=attn');
  await hp.waitForFunction(() => window.attnviz !== undefined);
  let hs = await hp.evaluate(() => attnviz.ready);
  check(hs.width === 1600 && hs.height === 1200, `devicePixelRatio 2 at 800×600: drawn at ${hs.width}×${hs.height}`);
  await hp.setViewportSize({width: 1024, height: 768});
  await hp.waitForFunction(() => attnviz.state().width === 2048, null, {timeout: 5000}).catch(() => {});
  hs = await hp.evaluate(() => attnviz.state());
  check(hs.width === 2048 && hs.height === 1536, `resized to 1024×768: drawn at ${hs.width}×${hs.height}`);
  await hi.close();

  // ---- no key ends the session; the address bar follows the window (issue 35, 5) ------
  s = await open('lesson=causal-decoder');
  try {
    for (const k of ['q', 'Shift+Q', 'Control+q', 'Escape', 'Escape']) {
      s = await press(k);
      const shown = await page.evaluate(() => document.getElementById('status').hidden && !document.getElementById('canvas').hidden);
      if (!(s && shown)) throw new Error(`${k} ended the session`);
    }
    await page.keyboard.press('q');
    await page.waitForFunction(() => /close the browser tab/.test(attnviz.state().toast), null, {timeout: 5000});
    check(true, 'q, Q, Ctrl+Q, Esc: the session goes on; q says how to leave');
  } catch (e) {
    check(false, 'q, Q, Ctrl+Q, Esc: ' + e.message.split('\n')[0]);
  }
  s = await open('lesson=causal-decoder');
  for (let i = 0; i < 4; i++) s = await press('ArrowRight');
  s = await press('Tab');
  const where = {lesson: s.lesson, stage: s.stage, batch: s.batch, head: s.head};
  const wantHere = `stage=${s.stage}&batch=${s.batch}&head=${s.head}&`;
  await page.waitForFunction((w) => location.search.includes(w), wantHere, {timeout: 5000}).catch(() => {});
  const address = await page.evaluate(() => location.search);
  await page.reload();
  await page.waitForFunction(() => window.attnviz !== undefined);
  s = await page.evaluate(() => attnviz.ready);
  check(s.lesson === where.lesson && s.stage === where.stage && s.batch === where.batch && s.head === where.head,
        `a reload comes back to the same lesson, stage and slice (${address} → ${s.stage}, batch ${s.batch}, head ${s.head}; was ${where.stage}, ${where.head})`);

  s = await open('');
  s = await press('ArrowRight');
  s = await press('ArrowRight');
  await page.waitForFunction((st) => location.search.includes('stage=' + st + '&'), s.stage, {timeout: 5000}).catch(() => {});
  await page.reload();
  await page.waitForFunction(() => window.attnviz !== undefined);
  const back = await page.evaluate(() => attnviz.ready);
  check(back.lesson.endsWith('/lessons/arange-2x4x4.json') && back.stage === s.stage, `the first lesson, reloaded: back at ${back.stage} (was ${s.stage}; ${await page.evaluate(() => location.search)})`);

  // ---- a mistyped link: why in plain words, and where to go (issue 35, 11) ------------
  const problem = async (query) => {
    await page.goto(base + 'index.html?' + query);
    await page.waitForFunction(() => window.attnviz !== undefined);
    const e = await page.evaluate(() => attnviz.ready.then(() => 'opened', (x) => x.message));
    await page.waitForFunction(() => !document.getElementById('status').hidden && document.querySelector('#status .why'), null, {timeout: 10000})
      .catch(() => {}); // (none: the checks below say so)
    return {error: e, ...(await page.evaluate(() => ({
      why: document.querySelector('#status .why')?.textContent || '',
      detail: document.querySelector('#status pre')?.textContent || '',
      first: document.querySelector('#status a.first')?.getAttribute('href') || '',
      lessons: [...document.querySelectorAll('#status ul.lessons a')].map((a) => [a.getAttribute('href'), a.textContent]),
    })))};
  };
  const shippedN = fs.readdirSync('lessons').filter((n) => n.endsWith('.json')).length;
  let pr = await problem('stage=nosuch');
  check(/--stage: .* has no stage "nosuch"/.test(pr.error) && pr.detail === pr.error, `?stage=nosuch: the program's line kept as details (“${pr.detail}”)`);
  check(/asks for the step “nosuch”/.test(pr.why) && !/--stage/.test(pr.why), `?stage=nosuch: said in plain words (“${pr.why}”)`);
  check(pr.first === '?lang=en' && pr.lessons.length === shippedN && pr.lessons[0][0] === '?lesson=arange-2x4x4&lang=en' &&
        pr.lessons.every(([h, t]) => /^\?lesson=[A-Za-z0-9_-]+&lang=en$/.test(h) && t.length > 3),
        `?stage=nosuch: a link to the first lesson and to all ${pr.lessons.length} lessons (“${pr.lessons.slice(0, 2).map((x) => x[1]).join('”, “')}”…)`);
  if (shotDir) await page.screenshot({path: path.join(shotDir, 'page-mistyped.png'), fullPage: true});
  if (pr.first) {
    await page.click('#status a.first');
    await page.waitForFunction(() => window.attnviz !== undefined);
    s = await page.evaluate(() => attnviz.ready);
  }
  check(pr.first && s.stage === 'input', `the first lesson's link opens it (${s.lesson})`);
  pr = await problem('lesson=casual-decoder');
  check(/no lesson called “casual-decoder”/.test(pr.why), `?lesson=casual-decoder: “${pr.why}”`);
  pr = await problem('lesson=course3/lesson.json');
  check(/is not on this site/.test(pr.why), `?lesson=course3/lesson.json (404): “${pr.why}”`);
  pr = await problem('lesson=causal-decoder&stage=nosuch&lang=zh');
  check(/nosuch/.test(pr.why) && /[\u4e00-\u9fff]/.test(pr.why) && pr.first === '?lang=zh', `?…&lang=zh: in Chinese (“${pr.why}”)`);
  if (shotDir) await page.screenshot({path: path.join(shotDir, 'page-mistyped-zh.png'), fullPage: true});
  check(pageErrors.length === 0, `no JavaScript errors${pageErrors.length ? ': ' + pageErrors.join('; ') : ''}`);
  await accessibility({browser, base, check}); // (a11y_web.mjs)
  await touchAndOffline({browser, base, check, overrides}); // (touch_web.mjs)
  await exportsInPage({browser, base, check, expect}); // (export_web.mjs)
  await presenterWindow({browser, base, check}); // (present_web.mjs)
  await typing({browser, base, check}); // (type_web.mjs)
  await lazyLessons({browser, base, check, expect, served, gone, slow}); // (lazy_web.mjs)
} catch (e) {
  check(false, 'the run stopped: ' + (e && e.stack || e));
}
await browser.close();
server.close();
console.log(`web: ${fails} failures`);
process.exit(fails ? 1 : 0);
