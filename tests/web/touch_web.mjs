// touch_web.mjs — make test-web's checks of the page with a finger and without the network
// (issue 40, items 4 and 6), called by test_web.mjs with its browser, server and check():
//  - touch, in Chromium's device emulation (isMobile + hasTouch) at a tablet's and a phone's
//    size, fingers sent as the device sends them (CDP Input.dispatchTouchEvent): the control
//    bar is there (pointer: coarse) and the canvas above it; a tap on a cell shows its tooltip
//    (the cell reported under the pointer), a tap closes the help, a tap on the timeline goes to its step; a swipe
//    left is the next stage, right the previous, one from an input cell edits nothing; a pinch out zooms the result's heatmap, one
//    finger then pans it (the frame moves), a pinch in and the bar's ⤢ zoom back out; every
//    button of the bar does its key (stage, play, head, layer); "More" opens the accessible
//    layer; axe-core finds 0 violations with the bar, in English and Chinese; on the phone the
//    bar fits the width and every button is at least 24 × 44 CSS px;
//  - offline: after a first visit the service worker keeps the site; with the network off
//    (context.setOffline) a teacher's link (lesson + stage) opens at its stage, a reload comes
//    back, a lesson file of the site and the Chinese font seen once online are there too, and so
//    are the shipped lessons opened online (fetched when opened: lazy_web.mjs), by a link or in
//    the window; one never opened says so (a line in the window; the link: in plain words); the
//    manifest makes the page installable (Chromium's own check) with the app's icon; a new
//    build (another sw.js) replaces the cache: only the new one is left, and it opens offline.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const AXE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const DEVICES = [['a tablet', {width: 1024, height: 768}, 2], ['a phone', {width: 390, height: 844}, 3]];

async function opened(p, base, query) {
  await p.goto(base + 'index.html?' + query);
  await p.waitForFunction(() => window.attnviz !== undefined);
  return p.evaluate(() => attnviz.ready);
}
const settled = (p) => p.waitForFunction(() => { const s = attnviz.state(); return s && !s.busy; }, null, {timeout: 20000, polling: 50})
  .then(() => p.evaluate(() => attnviz.state()));
// until f(state) holds (or 10 s: a phone's frame at 3× is large): the state then
async function until(p, f, arg) {
  await p.waitForFunction(([src, a]) => (0, eval)(src)(attnviz.state(), a), [f.toString(), arg], {timeout: 10000, polling: 30})
    .catch(() => {});
  return p.evaluate(() => attnviz.state());
}

export async function touchAndOffline({browser, base, check, overrides}) {
  const errors = [];
  for (const [what, viewport, dpr] of DEVICES) {
    const ctx = await browser.newContext({viewport, deviceScaleFactor: dpr, isMobile: true, hasTouch: true});
    const p = await ctx.newPage();
    p.on('pageerror', (e) => errors.push(e.message));
    const cdp = await ctx.newCDPSession(p);
    const fingers = (type, pts) => cdp.send('Input.dispatchTouchEvent', {type, touchPoints: pts.map(([x, y], id) => ({x, y, id}))});
    const tap = async (x, y) => { await fingers('touchStart', [[x, y]]); await fingers('touchEnd', []); };
    const drag = async (from, to, n = 8) => { // each finger from → to, in n moves
      await fingers('touchStart', from);
      for (let i = 1; i <= n; i++) await fingers('touchMove', from.map(([x, y], k) => [x + (to[k][0] - x) * i / n, y + (to[k][1] - y) * i / n]));
      await fingers('touchEnd', []);
    };
    // a rectangle of the window's output pixels in CSS px of the page
    const css = async ([x, y, w, h]) => p.evaluate(([r]) => {
      const c = document.getElementById('canvas').getBoundingClientRect(), s = attnviz.state(), k = c.width / s.width;
      return [c.left + r[0] * k, c.top + r[1] * k, r[2] * k, r[3] * k];
    }, [[x, y, w, h]]);

    let s = await opened(p, base, 'lesson=arange-2x4x4&stage=scores&lang=en');
    s = await settled(p);
    const m = await p.evaluate(() => {
      const bar = document.getElementById('touchbar'), b = bar.getBoundingClientRect(), c = document.getElementById('canvas').getBoundingClientRect();
      const buttons = [...bar.querySelectorAll('button')].map((x) => x.getBoundingClientRect());
      return {coarse: matchMedia('(pointer: coarse)').matches, shown: !bar.hidden, barTop: b.top, barBottom: b.bottom, canvasBottom: c.bottom,
              inner: innerHeight, width: innerWidth, right: Math.max(...buttons.map((r) => r.right)), left: Math.min(...buttons.map((r) => r.left)),
              small: Math.min(...buttons.map((r) => r.width)), low: Math.min(...buttons.map((r) => r.height)), n: buttons.length};
    });
    check(m.coarse && m.shown && Math.abs(m.barBottom - m.inner) < 1 && m.canvasBottom <= m.barTop + 0.5 && m.left >= 0 &&
          m.right <= m.width && m.small >= 24 && m.low >= 44,
          `touch, ${what} (${viewport.width}×${viewport.height}): the control bar is shown (pointer: coarse ${m.coarse}), the canvas above it ` +
          `(canvas to ${m.canvasBottom}, bar ${m.barTop}–${m.barBottom} of ${m.inner}), its ${m.n} buttons inside the width (${Math.round(m.left)}–${Math.round(m.right)} of ${m.width}), ` +
          `the smallest ${Math.round(m.small)}×${Math.round(m.low)} CSS px`);

    // a tap on a cell: its tooltip (the cell under the pointer), nothing else
    const [rx, ry, rw, rh] = await css(s.result);
    check(s.hover === null, `touch, ${what}: no tooltip before a tap (${JSON.stringify(s.hover)})`);
    const before = await p.screenshot();
    await tap(rx + rw * 0.3, ry + rh * 0.3);
    s = await until(p, (st) => st.hover !== null);
    check(s.hover !== null && s.stage === 'scores' && s.zoom === 1 && !(await p.screenshot()).equals(before),
          `touch, ${what}: a tap on a cell shows its tooltip (cell ${JSON.stringify(s.hover)}, still at ${s.stage})`);
    const first = s.hover || {row: -1, col: -1};
    await tap(rx + rw * 0.8, ry + rh * 0.8);
    s = await until(p, (st, h) => st.hover && (st.hover.row !== h.row || st.hover.col !== h.col), first);
    check(s.hover && (s.hover.row !== first.row || s.hover.col !== first.col), `touch, ${what}: a tap on another cell moves the tooltip there (${JSON.stringify(s.hover)})`);

    // over the help (?), a tap on a cell closes it, as a click does
    await p.evaluate(() => attnviz.key('?', 0));
    s = await until(p, (st) => st.help);
    const helpShown = s.help;
    await tap(rx + rw * 0.5, ry + rh * 0.5);
    s = await until(p, (st) => !st.help);
    check(helpShown && !s.help, `touch, ${what}: a tap closes the help (shown ${helpShown}, then ${s.help})`);

    // swipes
    const idx = s.index;
    const [cx, cy] = [viewport.width / 2, ry + rh / 2];
    await drag([[cx + viewport.width * 0.3, cy]], [[cx - viewport.width * 0.3, cy]]);
    s = await until(p, (st, i) => st.index !== i, idx);
    check(s.index === idx + 1 && s.hover === null, `touch, ${what}: a swipe left goes to the next stage (${idx} → ${s.index}, ${s.stage}), the tooltip gone`);
    s = await settled(p);
    await drag([[cx - viewport.width * 0.3, cy]], [[cx + viewport.width * 0.3, cy]]);
    s = await until(p, (st, i) => st.index !== i, idx + 1);
    check(s.index === idx, `touch, ${what}: a swipe right goes back (${s.index}, ${s.stage})`);
    s = await settled(p);

    // swipes that start on an input cell (which a mouse press selects and a drag scrubs: SDL's
    // finger-as-a-mouse edited the lesson here): the stage changes, nothing is edited
    s = await opened(p, base, 'lesson=arange-2x4x4&stage=input&lang=en');
    s = await settled(p);
    const [ix, iy, iw, ih] = await css(s.result), from = s.index;
    for (let k = 0; k < 2; k++) {
      await drag([[ix + iw * 0.5, iy + ih * 0.5]], [[ix + iw * 0.5 - viewport.width * 0.4, iy + ih * 0.3]]);
      s = await until(p, (st, i) => st.index === i, from + k + 1);
      s = await settled(p);
    }
    check(s.index === from + 2 && !s.edited, `touch, ${what}: two swipes from an input cell: two stages on (${from} → ${s.index}), nothing edited (${s.edited})`);

    // pinch out on a large result (18×18 attention weights), pan with one finger, pinch in, the bar's ⤢
    s = await opened(p, base, 'lesson=tiny-lm-fortunes&stage=l0.attn&lang=en');
    s = await settled(p);
    const big = s.index;
    const [px, py, pw, ph] = await css(s.result), pcx = px + pw / 2, pcy = py + ph / 2;
    const d0 = Math.min(pw, ph) * 0.15, d1 = Math.min(pw, ph) * 0.6;
    await drag([[pcx - d0, pcy], [pcx + d0, pcy]], [[pcx - d1, pcy], [pcx + d1, pcy]]);
    s = await until(p, (st) => st.zoom > 1.5);
    const zoomed = s.zoom;
    check(s.zoom > 1.5 && s.index === big, `touch, ${what}: a pinch out zooms the heatmap (zoom ${s.zoom}, same stage ${s.stage})`);
    await settled(p);
    const atZoom = await p.screenshot();
    await drag([[pcx, pcy]], [[pcx - pw * 0.3, pcy - ph * 0.3]]);
    await p.waitForTimeout(300);
    s = await settled(p);
    check(s.zoom === zoomed && s.index === big && !(await p.screenshot()).equals(atZoom),
          `touch, ${what}: one finger pans the zoomed heatmap (the frame moved; zoom ${s.zoom}, stage ${s.stage})`);
    await drag([[pcx - d1, pcy], [pcx + d1, pcy]], [[pcx - d0 * 0.6, pcy], [pcx + d0 * 0.6, pcy]]);
    s = await until(p, (st, z) => st.zoom < z, zoomed);
    check(s.zoom < zoomed, `touch, ${what}: a pinch in zooms out (${zoomed} → ${s.zoom})`);
    await drag([[pcx - d0, pcy], [pcx + d0, pcy]], [[pcx - d1, pcy], [pcx + d1, pcy]]);
    await until(p, (st) => st.zoom > 1.5);
    await p.tap('#touchbar button[data-touch="whole"]');
    s = await until(p, (st) => st.zoom === 1);
    check(s.zoom === 1, `touch, ${what}: the bar's ⤢ shows the whole heatmap again (zoom ${s.zoom})`);

    // a tap on the timeline: its step
    s = await opened(p, base, 'lesson=arange-2x4x4&stage=scores&lang=en');
    s = await settled(p);
    const [tx, ty, tw, th] = await css(s.timeline);
    await tap(tx + 4, ty + th / 2);
    s = await until(p, (st) => st.index === 0);
    check(s.index === 0, `touch, ${what}: a tap on the timeline's first step goes there (${s.stage})`);

    // the bar's buttons
    const press = async (id, f) => {
      const b = await settled(p);
      await p.tap(`#touchbar button[data-touch="${id}"]`);
      return {before: b, after: await until(p, f, b)};
    };
    let r = await press('next', (st, b) => st.index === b.index + 1);
    const okNext = r.after.index === r.before.index + 1;
    r = await press('prev', (st, b) => st.index === b.index - 1);
    const okPrev = r.after.index === r.before.index - 1;
    r = await press('head+', (st, b) => st.head !== b.head);
    const okHead = r.after.head !== r.before.head;
    r = await press('head-', (st, b) => st.head !== b.head);
    const okHeadBack = r.after.head === r.before.head - 1 || r.after.head === 1 - r.before.head;
    r = await press('play', (st) => st.busy);
    await p.waitForFunction((i) => attnviz.state().index > i, r.before.index, {timeout: 10000}).catch(() => {}); // (4 s a stage)
    await p.tap('#touchbar button[data-touch="play"]');
    const played = await p.evaluate(() => attnviz.state());
    const okPlay = played.index > r.before.index;
    check(okNext && okPrev && okHead && okHeadBack && okPlay,
          `touch, ${what}: the bar's → ← (${okNext}, ${okPrev}), H+ H− (${okHead}, ${okHeadBack}) and ▶❚❚ (played to ${played.stage}: ${okPlay}) do their keys`);
    await opened(p, base, 'lesson=induction-heads&stage=l0.attn&lang=en');
    r = await press('layer+', (st, b) => st.index !== b.index);
    const l1 = r.after.index !== r.before.index;
    r = await press('layer-', (st, b) => st.index !== b.index);
    check(l1 && r.after.index !== r.before.index, `touch, ${what}: the bar's L+ and L− change the layer (stage ${r.before.index} → ${r.after.index})`);
    await p.tap('#touchbar button[data-touch="more"]');
    const at = await p.waitForFunction(() => document.activeElement && document.activeElement.id === 'a11y-title', null, {timeout: 3000})
      .then(() => true, () => false);
    check(at, 'touch, ' + what + ': the bar\'s "More" opens the accessible layer (its buttons: every other key)');

    // axe with the bar, both languages
    for (const lang of ['en', 'zh']) {
      await opened(p, base, `lesson=arange-2x4x4&stage=attn&lang=${lang}`);
      await settled(p);
      await p.waitForFunction((l) => document.querySelector('#touchbar button[data-touch="more"]').textContent === (l === 'zh' ? '更多' : 'More'), lang);
      await p.addScriptTag({path: AXE});
      const v = await p.evaluate((tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']}), TAGS);
      const bad = v.violations.map((x) => `${x.id}: ${x.help} (${x.nodes.length}× ${x.nodes[0].target.join(' ')})`);
      check(bad.length === 0, `touch, ${what}: axe-core with the control bar, ${lang}: ${bad.length ? bad.join('; ') : '0 violations'}`);
    }
    await ctx.close();
  }
  // a desktop (a mouse): no bar, the canvas to the bottom
  {
    const ctx = await browser.newContext({viewport: {width: 1280, height: 720}});
    const p = await ctx.newPage();
    await opened(p, base, 'lesson=arange-2x4x4');
    const m = await p.evaluate(() => ({hidden: document.getElementById('touchbar').hidden,
                                       bottom: document.getElementById('canvas').getBoundingClientRect().bottom}));
    check(m.hidden && m.bottom === 720, `touch: with a mouse (pointer: fine) no bar, the canvas to the bottom (${m.bottom})`);
    await ctx.close();
  }

  // ---- offline ------------------------------------------------------------------------------
  const ctx = await browser.newContext({viewport: {width: 1280, height: 720}});
  const p = await ctx.newPage();
  p.on('pageerror', (e) => errors.push(e.message));
  const caches = () => p.evaluate(() => caches.keys());
  await opened(p, base, 'lesson=arange-2x4x4');
  const controlled = await p.waitForFunction(() => navigator.serviceWorker && navigator.serviceWorker.controller, null, {timeout: 20000})
    .then(() => true, () => false);
  const first = await caches();
  check(controlled && first.length === 1 && /^attnviz-[0-9a-f]{16}$/.test(first[0]),
        `offline: after the first visit a service worker controls the page, one cache (${first})`);
  const cdp = await ctx.newCDPSession(p);
  const inst = await cdp.send('Page.getInstallabilityErrors');
  const manifest = await p.evaluate(async () => {
    const m = await (await fetch(document.querySelector('link[rel=manifest]').href)).json();
    const icon = m.icons.find((i) => i.sizes === '512x512');
    const img = new Image();
    img.src = icon.src;
    await img.decode();
    return {name: m.short_name, icons: m.icons.length, w: img.naturalWidth, h: img.naturalHeight};
  });
  // (a test's browser context is incognito, which Chromium never installs from: that one reason aside)
  const why = inst.installabilityErrors.map((e) => e.errorId).filter((e) => e !== 'in-incognito');
  check(why.length === 0 && manifest.w === 512 && manifest.h === 512,
        `offline: installable as an app (Chromium's installability errors but incognito: ${why.join(', ') || 'none'}; ` +
        `manifest "${manifest.name}", ${manifest.icons} icons, the 512 px one ${manifest.w}×${manifest.h})`);
  await opened(p, base, 'lesson=arange-2x4x4&lang=zh');            // (the Chinese font, fetched on demand)
  await opened(p, base, 'lesson=extra/sentence-the-cat.json&stage=attn'); // (a lesson file of the site)
  await opened(p, base, 'lesson=causal-decoder');                   // (a shipped lesson: fetched when opened, kept)
  await opened(p, base, 'lesson=arange-2x4x4');
  await p.evaluate(() => attnviz.lesson('induction-heads'));        // (and one opened as the picker does)
  await ctx.setOffline(true);
  let s = await opened(p, base, 'lesson=causal-decoder&stage=attn&head=1&lang=en');
  check(s.stage === 'attn' && s.head === 1 && s.lesson.endsWith('/causal-decoder.json'),
        `offline: a teacher's link (?lesson=causal-decoder&stage=attn&head=1) opens there (${s.lesson}, ${s.stage}, head ${s.head})`);
  await p.reload();
  await p.waitForFunction(() => window.attnviz !== undefined);
  s = await p.evaluate(() => attnviz.ready);
  check(s.stage === 'attn' && s.lesson.endsWith('/causal-decoder.json'), `offline: a reload comes back there (${s.stage})`);
  s = await opened(p, base, 'lesson=extra/sentence-the-cat.json&stage=attn');
  check(s.stage === 'attn' && s.lesson.endsWith('/sentence-the-cat.json'), `offline: a lesson file of the site seen online opens (${s.lesson})`);
  // issue 39: a shipped lesson is fetched when opened; offline, the ones opened before open again
  // (in the window, as the picker opens them), one never opened says so in one line
  const reopened = await p.evaluate(() => attnviz.lesson('induction-heads').then((r) => r, (e) => e.message));
  s = await p.evaluate(() => attnviz.state());
  check(reopened === 1 && s.lesson.endsWith('/induction-heads.json'), `offline: a shipped lesson opened online opens again from the window (${s.lesson})`);
  const never = await p.evaluate(() => attnviz.lesson('gated-deltanet').then((r) => 'opened ' + r, (e) => e.message));
  s = await p.evaluate(() => attnviz.state());
  check(/could not be fetched/.test(never) && /Could not download the lesson “.*”: no connection/.test(s.toast) && s.lesson.endsWith('/induction-heads.json'),
        `offline: a shipped lesson never opened: “${s.toast}”, the lesson on screen stays`);
  await p.goto(base + 'index.html?lesson=gated-deltanet&stage=attn');
  await p.waitForFunction(() => window.attnviz !== undefined);
  const whyOff = await p.evaluate(() => attnviz.ready.then(() => 'opened', () => document.querySelector('#status .why')?.textContent || ''));
  check(/could not be downloaded. Check your connection/.test(whyOff), `offline: a link to a lesson never opened: “${whyOff}”`);
  s = await opened(p, base, 'lesson=arange-2x4x4&stage=attn&lang=zh');
  const zh = await p.evaluate(() => attnviz.frame().formula + ' ' + attnviz.a11y().title);
  check(s.lang === 'zh' && /[\u4e00-\u9fff]/.test(zh), `offline: in Chinese, with the font seen online (${s.lang}: “${zh}”)`);
  await ctx.setOffline(false);

  // a new build: another sw.js; the new cache replaces the old one
  const sw = await (await fetch(base + 'sw.js')).text();
  overrides['/sw.js'] = sw.replace(/const VERSION = '([0-9a-f]+)'/, "const VERSION = '$1next'");
  await opened(p, base, 'lesson=arange-2x4x4');
  await p.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r.update())); // (as the browser does, now)
  const next = `attnviz-${first[0].slice(8)}next`;
  let after = await caches();
  for (let i = 0; i < 100 && !(after.length === 1 && after[0] === next); i++) { await p.waitForTimeout(200); after = await caches(); }
  await ctx.setOffline(true);
  s = await opened(p, base, 'lesson=causal-decoder&stage=scores');
  check(after.length === 1 && after[0] === next && s.stage === 'scores',
        `offline: a new build replaces the cache (${first} → ${after}) and opens offline, the lesson kept before (its bytes unchanged) moved over (${s.stage})`);
  s = await opened(p, base, 'lesson=arange-2x4x4&stage=attn&lang=zh');
  const zh2 = await p.evaluate(() => attnviz.a11y().title);
  check(s.lang === 'zh' && /[\u4e00-\u9fff]/.test(zh2), `offline: after the new build Chinese still opens (the font moved to the new cache: “${zh2}”)`);
  delete overrides['/sw.js'];
  await ctx.close();
  check(errors.length === 0, `touch and offline: no JavaScript errors${errors.length ? ': ' + errors.join('; ') : ''}`);
}
