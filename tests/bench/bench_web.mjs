// bench_web.mjs — the browser build's speed in Debian's headless Chromium (make
// bench-web; make bench runs it after the desktop rows). Prints rows of the same
// table as the C benchmarks:
//   first frame, cold cache (a new browser context each time), on 127.0.0.1
//   frame time while transitions play at 1280×720 (every frame of → through the classic lesson)
//   what-if edit → frame (the frame that applies the edit: recompute + draw)
//   transfer of an English first visit, gzipped (what a static host that compresses sends), and
//     what opening the largest shipped lesson adds (fetched only then: issue 39)
//   the page's core: the forward pass of bench_core's causal L = 256 lesson in the page
//     against bench_core's own on one native thread, alternating 5 rounds (the ratio per
//     round); the largest legal lesson's forward in the page
//   the largest shipped lesson (the largest file in lessons/) to its first frame, cold,
//     alternated with the default lesson
//   idle: frames drawn and main-thread CPU in 5 s with nothing moving
//   memory in use: stepping, typing an edit, switching head and language in a loop for
//     BENCH_WEB_SOAK seconds (120 by default): malloc's bytes, the wasm heap and the JS heap
//     after each round, their slope over the rounds after the first
//   training live (R) of the induction lesson from its step 0 to its loss drop, and the frames
//     drawn meanwhile
//   the language switch (L, the font fetched) and the presenter window's start (F5):
//     bench_web_present.mjs
//   a character typed → frame, the largest shipped lesson (issue 39): bench_web_type.mjs
//
//   node bench_web.mjs SITE BENCH_CORE ATTNVIZ (bench_core: the native side and the lessons' text;
//   attnviz: the desktop's --dump of the typed text). BENCH_WEB_ONLY=typing: only the typing row.
import { chromium } from 'playwright-core';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import {execFileSync} from 'node:child_process';
import {benchPresent} from './bench_web_present.mjs';
import {benchTyping} from './bench_web_type.mjs';

const site = path.resolve(process.argv[2]);
const benchCore = process.argv[3] ? path.resolve(process.argv[3]) : null;
const attnvizBin = process.argv[4] ? path.resolve(process.argv[4]) : null;
const types = {'.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm'};
let served = 0; // bytes sent gzipped, as a compressing static host would
const server = http.createServer((req, res) => {
  const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = path.join(site, rel.endsWith('/') ? rel + 'index.html' : rel);
  fs.readFile(file, (err, data) => {
    if (err || !file.startsWith(site)) { res.writeHead(404); res.end(); return; }
    // as a static host: Last-Modified, and 304 to a request that has the file already
    const modified = fs.statSync(file).mtime.toUTCString();
    if (req.headers['if-modified-since'] === modified) { res.writeHead(304, {'last-modified': modified}); res.end(); return; }
    const gz = zlib.gzipSync(data, {level: 6});
    served += gz.length;
    res.writeHead(200, {'content-type': types[path.extname(file)] || 'application/octet-stream', 'content-encoding': 'gzip',
                        'last-modified': modified});
    res.end(gz);
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/index.html`;

function row(name, xs, target, unit) {
  xs = xs.slice().sort((a, b) => a - b);
  const med = xs[Math.floor(xs.length / 2)], p99 = xs[Math.floor((xs.length - 1) * 0.99)];
  const ok = med <= target;
  console.log(`| ${name.padEnd(48)} | ${med.toFixed(2).padStart(9)} ${unit.padEnd(4)} | ${p99.toFixed(2).padStart(9)} ${unit.padEnd(4)} | <= ${target} ${unit} | ${ok ? 'ok' : 'MISSED'} |`);
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
async function fresh() {
  const context = await browser.newContext({viewport: {width: 1280, height: 720}, deviceScaleFactor: 1});
  const page = await context.newPage();
  return {context, page};
}

// the largest shipped lesson (issue 39: subword-lm-fortunes.json, the largest model)
const largestShipped = fs.readdirSync('lessons').filter((f) => f.endsWith('.json'))
  .map((f) => [fs.statSync(path.join('lessons', f)).size, f]).sort((a, b) => b[0] - a[0])[0][1];
if (process.env.BENCH_WEB_ONLY === 'typing') {
  await benchTyping({browser, base, row, largest: largestShipped, desktop: attnvizBin});
  await browser.close();
  server.close();
  process.exit(0);
}

// first frame, cold: a new context has an empty cache
const first = [];
let transfer = 0, transferOffline = 0;
for (let i = 0; i < 7; i++) {
  const {context, page} = await fresh();
  served = 0;
  const t0 = Date.now();
  await page.goto(base);
  await page.waitForFunction(() => window.attnviz !== undefined);
  await page.evaluate(() => attnviz.ready);
  first.push(Date.now() - t0);
  if (i === 0) {
    transfer = served;
    // then the offline copy: the service worker's install revalidates every file of the site
    await page.evaluate(() => Promise.race([navigator.serviceWorker.ready, new Promise((r) => setTimeout(r, 20000))]));
    transferOffline = served;
  }
  await context.close();
}
row('web: first frame, cold cache, localhost', first, 1000, 'ms');

// the largest shipped lesson to its first frame, cold, alternated with the default lesson
const opened = {[largestShipped]: [], default: []};
let transferLargest = 0; // issue 39: what its link's first visit costs beyond the default's (its file, fetched when opened)
for (let i = 0; i < 5; i++)
  for (const which of [largestShipped, 'default']) {
    const {context, page} = await fresh();
    const t0 = Date.now(), before = served;
    await page.goto(which === 'default' ? base : `${base}?lesson=${largestShipped.replace(/\.json$/, '')}`);
    await page.waitForFunction(() => window.attnviz !== undefined);
    await page.evaluate(() => attnviz.ready);
    opened[which].push(Date.now() - t0);
    if (i === 0 && which !== 'default') transferLargest = served - before - transfer;
    await context.close();
  }
row(`web: first frame, ${largestShipped} (5 alternated, cold)`, opened[largestShipped], 1000, 'ms');
row('web: first frame, the default lesson, same rounds', opened.default, 1000, 'ms');

const {context, page} = await fresh();
await page.goto(base);
await page.waitForFunction(() => window.attnviz !== undefined);
await page.evaluate(() => attnviz.ready);
const settled = () => page.waitForFunction(() => !attnviz.state().busy, null, {polling: 50, timeout: 30000});
// transitions: → through every stage, every frame timed
await page.evaluate(() => attnviz.frameTimes());
const n = (await page.evaluate(() => attnviz.state())).stages;
for (let i = 1; i < n; i++) {
  const e = (await page.evaluate(() => attnviz.state())).events;
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((k) => attnviz.state().events > k, e, {polling: 20});
  await settled();
}
const frames = await page.evaluate(() => attnviz.frameTimes());
row(`web: frame time, transitions, 1280×720 (${frames.length} frames)`, frames, 4, 'ms');

// what-if: an edit of the first input cell, ten times: the frame that applies it
await page.keyboard.press('Home');
await settled();
const edits = [];
for (let i = 0; i < 10; i++) {
  await page.keyboard.press('Enter');
  await page.keyboard.type(String(i + 1));
  await settled().catch(() => {});
  await page.evaluate(() => attnviz.frameTimes());
  const e = (await page.evaluate(() => attnviz.state())).events;
  await page.keyboard.press('Enter');
  await page.waitForFunction((k) => attnviz.state().events > k, e, {polling: 10});
  await page.waitForTimeout(100);
  const t = await page.evaluate(() => attnviz.frameTimes());
  edits.push(t[0]);
}
row('web: what-if edit → its frame, 1280×720', edits, 33, 'ms');

// the page's core against the native one (one thread each), alternating rounds
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const times = (text, what) => {
  if (!text || text.startsWith('error')) throw new Error(`${what}: ${text}`);
  return text.trim().split(' ').map(Number);
};
if (benchCore) {
  const run = (...a) => execFileSync(benchCore, a, {cwd: process.cwd()}).toString();
  const json = run('--lesson-json', '256', '256', '8').trim();
  // CPU seconds: the page's renderers' (Chrome's SystemInfo, in the kernel's 10 ms ticks) and a
  // native run's (getrusage of the child: exact); a pass's = (45 passes − 5 passes) / 40, so start-up,
  // warm-up and the tick cancel. A loaded machine stretches the wall times, not the CPU times.
  const cdpBrowser = await browser.newBrowserCDPSession();
  const rendererCpu = async () => (await cdpBrowser.send('SystemInfo.getProcessInfo')).processInfo
    .filter((p) => p.type === 'renderer').reduce((a, p) => a + p.cpuTime, 0);
  const pageCpu = async (text, n) => {
    const c0 = await rendererCpu();
    times(await page.evaluate(([j, k]) => attnviz.benchForward(j, k), [text, n]), 'page');
    return await rendererCpu() - c0;
  };
  const nativeCpu = (n) => Number(execFileSync('python3', ['-c', 'import resource, subprocess, sys\n' +
    'subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n' +
    'r = resource.getrusage(resource.RUSAGE_CHILDREN)\nprint(r.ru_utime + r.ru_stime)',
    benchCore, '--forward', '256', '256', '8', String(n)]).toString());
  const web = [], native = [], ratio = [], webCpu = [], nativeCpuMs = [], ratioCpu = [];
  for (let r = 0; r < 5; r++) {
    const w = times(await page.evaluate(([j, n]) => attnviz.benchForward(j, n), [json, 9]), 'page');
    const c = times(run('--forward', '256', '256', '8', '9'), 'native');
    web.push(...w), native.push(...c), ratio.push(median(w) / median(c));
    const wc = ((await pageCpu(json, 45)) - (await pageCpu(json, 5))) / 40 * 1e3;
    const nc = (nativeCpu(45) - nativeCpu(5)) / 40 * 1e3;
    webCpu.push(wc), nativeCpuMs.push(nc), ratioCpu.push(wc / nc);
  }
  row('web: core forward, L=256 C=256 H=8 causal (1 thread)', web, 10, 'ms');
  row('native: the same, 1 thread, same rounds', native, 4, 'ms');
  row(`ratio page / native (5 rounds: ${ratio.map((x) => x.toFixed(2)).join(' ')})`, ratio, 2.5, 'x');
  row('web: the same forward, CPU time a pass', webCpu, 10, 'ms');
  row('native: the same, CPU time a pass, same rounds', nativeCpuMs, 4, 'ms');
  row(`ratio of CPU times (rounds: ${ratioCpu.map((x) => x.toFixed(2)).join(' ')})`, ratioCpu, 2.5, 'x');
  const largestJson = run('--largest-json').trim();
  const largest = times(await page.evaluate(([j, n]) => attnviz.benchForward(j, n), [largestJson, 2]),
                        'page, largest lesson');
  row('web: core forward, largest lesson (L=1024 C=1024 H=4 d=512 F=3072)', largest.map((x) => x / 1e3), 2, 's');
  row('web: the same, CPU time a pass', [await pageCpu(largestJson, 1), await pageCpu(largestJson, 1)], 2, 's');
} else {
  console.log('| web: core forward: skipped (no bench_core given) | | | | |');
}

const settledIn = (p) => p.waitForFunction(() => !attnviz.state().busy, null, {polling: 50, timeout: 30000});
// idle: nothing moves, so nothing is drawn; the main thread's CPU meanwhile (Chrome's TaskDuration)
const use = await fresh(); // (a page of its own: the forward rows above grew the other's heap)
await use.page.goto(base);
await use.page.waitForFunction(() => window.attnviz !== undefined);
await use.page.evaluate(() => attnviz.ready);
const cdp = await use.context.newCDPSession(use.page);
await cdp.send('Performance.enable');
const metric = async (name) => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === name).value;
await use.page.keyboard.press('Home');
await settledIn(use.page);
await use.page.waitForTimeout(500);
const idle0 = {frames: (await use.page.evaluate(() => attnviz.state())).frames, cpu: await metric('TaskDuration'), t: Date.now()};
await use.page.waitForTimeout(5000);
const idleFrames = (await use.page.evaluate(() => attnviz.state())).frames - idle0.frames;
const idleCpu = (await metric('TaskDuration') - idle0.cpu) / ((Date.now() - idle0.t) / 1e3) * 100;
console.log(`| ${'web: idle 5 s: frames drawn (main thread CPU)'.padEnd(48)} | ${String(idleFrames).padStart(9)} (${idleCpu.toFixed(2)} %) | ${''.padStart(14)} | 0 frames | ${idleFrames === 0 ? 'ok' : 'MISSED'} |`);

// memory in use while a class uses the page: rounds of → through every stage and back to the
// first, the next head, an edit of the first input cell, the language switched twice
const soak = Number(process.env.BENCH_WEB_SOAK || 120) * 1e3;
const stages = (await use.page.evaluate(() => attnviz.state())).stages;
const press = async (key, shift) => {
  const e = (await use.page.evaluate(() => attnviz.state())).events;
  await use.page.evaluate(([k, sh]) => attnviz.key(k, sh), [key, shift]);
  await use.page.waitForFunction((k) => attnviz.state().events > k, e, {polling: 10});
};
const sample = async () => {
  await cdp.send('HeapProfiler.collectGarbage');
  const malloc = await use.page.evaluate(() => attnviz.heapUsed()), text = await use.page.evaluate(() => attnviz.textCacheBytes());
  return {t: Date.now(), malloc, text, rest: malloc - text, wasm: await use.page.evaluate(() => Module.HEAPU8.length),
          js: await metric('JSHeapUsedSize')};
};
const samples = [];
const soakStart = Date.now();
for (let r = 0; Date.now() - soakStart < soak || r < 3; r++) {
  for (let i = 1; i < stages; i++) await press('Right');
  await settledIn(use.page);
  await press('Home');
  await press('Tab');
  await settledIn(use.page);
  await use.page.keyboard.press('Enter');
  await use.page.keyboard.type(String(r % 9 + 1));
  await use.page.keyboard.press('Enter');
  await settledIn(use.page);
  await press('L');
  await settledIn(use.page);
  await press('L');
  await settledIn(use.page);
  samples.push(await sample());
}
const slope = (key, from) => { // least squares over the rounds from `from` on, in bytes a minute
  const xs = samples.slice(from).map((x) => (x.t - samples[from].t) / 6e4), ys = samples.slice(from).map((x) => x[key]);
  const mx = xs.reduce((a, b) => a + b) / xs.length, my = ys.reduce((a, b) => a + b) / ys.length;
  let sxy = 0, sxx = 0;
  for (let i = 0; i < xs.length; i++) sxy += (xs[i] - mx) * (ys[i] - my), sxx += (xs[i] - mx) ** 2;
  return sxx ? sxy / sxx : 0;
};
const soakMin = (samples.at(-1).t - soakStart) / 6e4, mb = (x) => (x / 1048576).toFixed(2);
const s0 = samples[0], last = samples.at(-1);
// Text's textures are cached up to 16 MiB of pixels (src/draw/text.c): new numbers (each
// transition's in-between values, each edit) fill it first, so malloc's total grows until the
// cache is full; what malloc holds beyond the cache must not grow at all.
const maxText = Math.max(...samples.map((x) => x.text));
for (const [key, what, judged] of [['malloc', "malloc's bytes in use", false], ['text', 'of which the text cache (cap 16 MiB)', false],
                                   ['rest', 'malloc beyond the text cache', true], ['js', 'JS heap in use', true]]) {
  const kb = slope(key, 1) / 1024, late = slope(key, Math.floor(samples.length / 2)) / 1024;
  const f = (x) => (x >= 0 ? '+' : '') + x.toFixed(1);
  const verdict = key === 'text' ? (maxText <= 16 * 1048576 ? 'ok' : 'MISSED') : judged ? (late <= 1 ? 'ok' : 'MISSED') : 'info';
  const target = key === 'text' ? '<= 16 MiB' : judged ? 'no growth' : '—';
  console.log(`| ${`web: memory, ${what}, ${samples.length} rounds in ${soakMin.toFixed(1)} min`.padEnd(48)} | ${mb(s0[key])} → ${mb(last[key])} MiB | ${f(kb)} KiB/min, last half ${f(late)} | ${target} | ${verdict} |`);
}
console.log(`| ${'web: memory, the wasm heap (grows, never shrinks)'.padEnd(48)} | ${mb(s0.wasm)} → ${mb(last.wasm)} MiB | ${''.padStart(14)} | no growth | ${last.wasm === s0.wasm ? 'ok' : 'MISSED'} |`);
await use.context.close();
// training live (R) in the page (issue 38): the induction lesson from its step 0 (Shift+U back
// through its checkpoints) to its loss drop (a held-out loss under 1.6, as bench_train's row),
// the steps taken between frames; the frames drawn meanwhile (steps included) timed
{
  await page.goto(base + '?lesson=induction-heads');
  await page.waitForFunction(() => window.attnviz !== undefined);
  await page.evaluate(() => attnviz.ready);
  await page.focus('#canvas');
  const n = JSON.parse(fs.readFileSync('lessons/induction-heads.json', 'utf8')).checkpoints.length;
  for (let i = 0; i < n; i++) {
    const e = (await page.evaluate(() => attnviz.state())).events;
    await page.keyboard.press('Shift+U');
    await page.waitForFunction((k) => attnviz.state().events > k, e, {polling: 10});
  }
  await settled();
  await page.evaluate(() => attnviz.frameTimes());
  const t0 = Date.now();
  await page.keyboard.press('r');
  await page.waitForFunction(() => { const t = attnviz.state().train; return t && t.step > 0 && t.held < 1.6; }, null,
                             {polling: 250, timeout: 600000});
  const secs = (Date.now() - t0) / 1e3, tr = (await page.evaluate(() => attnviz.state())).train;
  const during = await page.evaluate(() => attnviz.frameTimes());
  await page.keyboard.press('r');
  console.log(`| web: induction steps to its loss drop (< 1.6): ${tr.step} (held-out ${tr.held.toFixed(3)}) | | | | |`);
  row('web: induction to its loss drop (R in the page)', [secs], 120, 's');
  row(`web: frame while training, steps included (${during.length})`, during, 16, 'ms');
}
await context.close();
await benchTyping({browser, base, row, largest: largestShipped, desktop: attnvizBin});
// issue 43's rows of the page's language switch and the presenter window (bench_web_present.mjs)
await benchPresent({browser, base, row});
await browser.close();
server.close();
console.log(`| ${'web: transfer, English first visit, gzipped'.padEnd(48)} | ${(transfer / 1e6).toFixed(2).padStart(9)} MB   | ${''.padStart(14)} | <= 2.5 MB | ${transfer <= 2.5e6 ? 'ok' : 'MISSED'} |`);
console.log(`| ${'web: the same, with the offline copy installed'.padEnd(48)} | ${(transferOffline / 1e6).toFixed(2).padStart(9)} MB   | ${''.padStart(14)} | <= 2.5 MB | ${transferOffline <= 2.5e6 ? 'ok' : 'MISSED'} |`);
console.log(`| ${('web: + ' + largestShipped + ' when opened, gzipped').padEnd(48)} | ${(transferLargest / 1e6).toFixed(2).padStart(9)} MB   | ${''.padStart(14)} | only then | ${transferLargest > 0 ? 'ok' : 'MISSED'} |`);
