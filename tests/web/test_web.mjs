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
// question and finds the progress after a reload, drops a broken lesson (the
// desktop's one-line error; the lesson on screen stays), opens a link to a stage,
// and quits (Q leaves a page that says so, not a blank one).
import { chromium } from 'playwright-core';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const [site, expect] = process.argv.slice(2).map((p) => path.resolve(p));
let fails = 0;
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) fails++;
}
const types = {'.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json'};
const server = http.createServer((req, res) => {
  const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
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
function maxDiff(a, b, skip) { // the largest difference of a channel (RGB), and how many pixels differ by more than 2
  if (a.w !== b.w || a.h !== b.h) return {max: 255, over: -1};
  let max = 0, over = 0;
  for (let i = 0; i < a.rgba.length; i += 4) {
    const x = (i / 4) % a.w, y = Math.floor(i / 4 / a.w);
    if (skip && x >= skip[0] && x < skip[0] + skip[2] && y >= skip[1] && y < skip[1] + skip[3]) continue;
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
  const n = (await state()).events;
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
// The expected-answers folder's lesson NAME, put in the page's files as a dropped file
// is (/tmp/drop/NAME) and opened; the page's error list emptied first.
async function dropLesson(name) {
  const bytes = fs.readFileSync(path.join(expect, name));
  await page.evaluate(([n, b]) => {
    Module.FS.mkdirTree('/tmp/drop');
    Module.FS.writeFile('/tmp/drop/' + n, new Uint8Array(b));
    attnviz.errors.length = 0;
    attnviz.open('/tmp/drop/' + n);
  }, [name, [...bytes]]);
}
async function download(action) {
  const [d] = await Promise.all([page.waitForEvent('download', {timeout: 10000}), action()]);
  return {name: d.suggestedFilename(), data: fs.readFileSync(await d.path())};
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
  d = maxDiff(shot, native, row);
  check(d.over === 0 && s.buttons[3] > 0 && s.buttons[3] < 60,
        `a screenshot of the page equals the native export of the frame but for the buttons' row ${row} (largest difference ${d.max}/255, ${d.over} pixels over 2/255)`);

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

  // ---- a broken lesson dropped on the page: the desktop's error, the lesson stays -----
  const stay = await state();
  await dropLesson('broken.json');
  await page.waitForFunction(() => attnviz.errors.length > 0, null, {timeout: 5000});
  const errs = await page.evaluate(() => attnviz.errors.slice());
  const want = fs.readFileSync(path.join(expect, 'broken.err'), 'utf8').trim();
  check(errs.length === 1 && errs[0] === want, `a broken lesson: one line, the desktop's (“${errs[0]}”)`);
  s = await state();
  check(s.lesson === stay.lesson && s.stage === stay.stage, 'a broken lesson: the lesson on screen stays');

  // ---- a lesson big enough for the tiled kernels: the desktop's bytes -------------------
  await dropLesson('big.json');
  await page.waitForFunction(() => attnviz.state().lesson.endsWith('big.json') || attnviz.errors.length > 0, null, {timeout: 10000});
  const bigDump = await page.evaluate(() => attnviz.dump());
  check(bigDump === fs.readFileSync(path.join(expect, 'big.dump.json'), 'utf8'),
        'a 2×40×48 causal lesson (tiled products, attn·V to the last nonzero weight): dump() equals the desktop --dump, byte for byte');

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
  const shipped = await open('lesson=causal-decoder&projector=1');
  check(shipped.lesson.endsWith('causal-decoder.json'), `?lesson=causal-decoder&projector=1 opens it (${shipped.lesson})`);
  await page.goto(base + 'index.html?lesson=causal-decoder&batch=1');
  await page.waitForFunction(() => window.attnviz !== undefined);
  const why = await page.evaluate(() => attnviz.ready.then(() => 'opened', (e) => e.message));
  check(/--batch\/--head: .*causal-decoder.json has batches 0\.\.0/.test(why), `?batch=1 of a one-batch lesson: ready is rejected with the reason (“${why}”)`);
  s = await open('lesson=extra/sentence-the-cat.json&stage=attn');
  check(s.lesson === '/tmp/url/sentence-the-cat.json' && s.stage === 'attn', `?lesson=extra/sentence-the-cat.json: a lesson file on the same site (${s.lesson})`);
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

  // ---- E: the frames as one .zip; the presenter, GIF: a clear message -----------------
  await press('e');
  const zipDl = await download(() => page.keyboard.press('1'));
  check(zipDl.name.endsWith('.zip') && zipDl.data.readUInt32LE(0) === 0x04034b50 && zipDl.data.includes('frames.json'),
        `E 1: the PNG frames as one zip (${zipDl.name}, ${zipDl.data.length} bytes)`);
  s = await settled(20000);
  await page.keyboard.press('F5');
  await page.waitForFunction(() => /not in the browser/.test(attnviz.state().toast), null, {timeout: 5000})
    .then(() => check(true, 'F5 (presenter): “not in the browser version” said'), () => check(false, 'F5: no message'));
  s = await settled();
  await press('e');
  await page.keyboard.press('4');
  await page.waitForFunction(() => /not in the browser/.test(attnviz.state().toast), null, {timeout: 5000})
    .then(() => check(true, 'E 4 (GIF): “not in the browser version” said'), () => check(false, 'E 4 (GIF): no message'));

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

  // ---- Q: never a blank page -------------------------------------------------------------
  await page.keyboard.press('q');
  await page.waitForFunction(() => !document.getElementById('status').hidden, null, {timeout: 5000});
  const closed = await page.evaluate(() => document.getElementById('status').innerText);
  check(/closed/.test(closed) && /Start again/.test(closed), `Q: the page says so (“${closed.replace(/\n/g, ' ')}”)`);
  check(pageErrors.length === 0, `no JavaScript errors${pageErrors.length ? ': ' + pageErrors.join('; ') : ''}`);
} catch (e) {
  check(false, 'the run stopped: ' + (e && e.stack || e));
}
await browser.close();
server.close();
console.log(`web: ${fails} failures`);
process.exit(fails ? 1 : 0);
