// a11y_web.mjs — make test-web's accessibility checks (issue 40, items 1–3), called by
// test_web.mjs with its page, server and helpers:
//  - axe-core (npm, tests/web/package-lock.json; installed under build/web-node) finds no
//    WCAG 2.0/2.1 A or AA violation on every stage of the classic lesson and of a trained
//    lesson, in English and Chinese, in study mode and in projector mode, of the backward
//    view (Ctrl+B) and the compare view (Ctrl+D) in both languages, with the
//    accessible layer out of sight and opened by the keyboard;
//  - the layer follows the frame: its live region says the stage's title, formula and
//    narration (the window's own, attnviz.frame()); the cell cursor (R, arrows) puts the
//    cell's value and the tooltip's worked sum in the second live region; the spoken text
//    of three stages is printed ("spoken:") and written to build/web-transcript.txt (the
//    screen-reader transcript: every change of the live and status regions, in order);
//  - the keyboard: Shift+Tab leaves the canvas for the skip link (focus ring seen), Enter
//    opens the layer, every button there does its key's action, Esc goes back; Shift+Tab
//    leaves the lab's field, the study box and the text box too (no trap);
//  - prefers-reduced-motion: a stage's transition is at its end at once (and not without it);
//  - 200 % zoom (640×360 CSS px at devicePixelRatio 2) and 320 CSS px: nothing wider than
//    the page, the layer's controls inside it, the canvas drawn at the device's pixels.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const AXE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export async function accessibility({browser, base, check}) {
  const errors = [];
  let ctx = null, page = null;
  const fresh = async () => { // a browser of its own (no study progress kept from another run)
    if (ctx) await ctx.close();
    ctx = await browser.newContext({viewport: {width: 1280, height: 720}, deviceScaleFactor: 1});
    page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
  };
  await fresh();
  const state = () => page.evaluate(() => attnviz.state());
  const open = async (query, p = page) => {
    await p.goto(base + 'index.html?' + query);
    await p.waitForFunction(() => window.attnviz !== undefined);
    return p.evaluate(() => attnviz.ready);
  };
  const settled = async (p = page) => {
    // (study mode: a hidden result holds its stage's animation, never "settled")
    await p.waitForFunction(() => { const s = attnviz.state(); return s && (!s.busy || s.study.on); }, null, {timeout: 20000, polling: 50});
    // the layer follows 150 ms after the last frame drawn
    await p.waitForFunction(() => { const a = attnviz.a11y(); return a && document.getElementById('a11y-title').textContent === a.title; },
                            null, {timeout: 5000, polling: 50});
    return p.evaluate(() => attnviz.state());
  };
  const press = async (key, p = page) => {
    const n = (await p.evaluate(() => attnviz.state())).events;
    await p.keyboard.press(key);
    await p.waitForFunction((k) => attnviz.state().events > k, n, {timeout: 5000, polling: 20});
    const s = await p.evaluate(() => attnviz.state());
    if (s.study.on) { await p.waitForTimeout(300); return p.evaluate(() => attnviz.state()); }
    return settled(p);
  };
  const axe = async (p = page) => {
    if (!(await p.evaluate(() => !!window.axe))) await p.addScriptTag({path: AXE});
    const r = await p.evaluate((tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']}), TAGS);
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length}× ${v.nodes[0].target.join(' ')})`);
  };
  const openLayer = async (p = page) => {
    await p.evaluate(() => { document.getElementById('skip').focus(); });
    await p.keyboard.press('Enter');
    await p.waitForFunction(() => document.activeElement && document.activeElement.id === 'a11y-title', null, {timeout: 3000});
  };

  // ---- axe-core on every stage ----------------------------------------------------------
  const runs = [['lesson=arange-2x4x4&lang=en', 'the classic lesson'], ['lesson=arange-2x4x4&lang=zh', 'the classic lesson, 中文'],
                ['lesson=reversal-anti-diagonal&lang=en', 'a trained lesson'], ['lesson=reversal-anti-diagonal&lang=zh', 'a trained lesson, 中文'],
                ['lesson=arange-2x4x4&study=1&lang=en', 'study mode'], ['lesson=arange-2x4x4&projector=1&lang=en', 'projector mode'],
                ['lesson=arange-2x4x4&study=1&projector=1&lang=zh', 'study + projector, 中文'],
                // the learning views (issue 38, 5; issue 41, 1): their keys pressed first
                ['lesson=induction-heads&lang=en', 'the backward view (Ctrl+B), from dL/dlogits on', ['Control+b']],
                ['lesson=induction-heads&lang=zh', 'the backward view (Ctrl+B), 中文', ['Control+b']],
                ['lesson=induction-heads&lang=en', 'the compare view (Ctrl+D)', ['Control+d']],
                ['lesson=induction-heads&lang=zh', 'the compare view (Ctrl+D), 中文', ['Control+d']]];
  for (const [query, what, keys = []] of runs) {
    await fresh();
    let s = await open(query);
    s = await settled();
    for (const k of keys) s = await press(k);
    const bad = new Set();
    let frames = 0, opened = 0, last = '';
    for (let i = 0; i < 80; i++) {
      const here = s.stage + '/' + (await page.evaluate(() => attnviz.frame().part + '/' + attnviz.a11y().title));
      if (here === last) break; // (the last stage; study mode: a question not answered holds →)
      last = here;
      for (const v of await axe()) bad.add(`${s.stage}: ${v}`);
      frames++;
      if (i % 4 === 0) { // the layer opened by the keyboard: its contrast, its focus
        await openLayer();
        for (const v of await axe()) bad.add(`${s.stage} (layer open): ${v}`);
        opened++;
        await page.keyboard.press('Escape');
        await page.waitForFunction(() => document.activeElement === document.getElementById('canvas'));
      }
      const lang = await page.evaluate(() => document.documentElement.lang);
      if (lang !== (query.includes('lang=zh') ? 'zh-CN' : 'en')) bad.add(`${s.stage}: <html lang="${lang}">`);
      for (let q = 0; q < 8 && s.study.asking; q++) { // study mode: each question's frame checked, then N
        s = await press('n');                          // shows its answer, Enter the stage's next question
        for (const v of await axe()) bad.add(`${s.stage} (answer shown): ${v}`);
        if (!s.study.asking) s = await press('Enter');
      }
      s = await press('ArrowRight');
    }
    check(bad.size === 0 && frames > 3, `axe-core (WCAG 2.1 A/AA): ${what}, ${frames} frames (${opened} with the layer open): ${bad.size ? [...bad].slice(0, 4).join('; ') : '0 violations'}`);
  }

  // ---- the live regions: what a screen reader says ------------------------------------
  await fresh();
  await open('lesson=arange-2x4x4&lang=en');
  await settled();
  await page.evaluate(() => {
    window.spoken = [];
    for (const id of ['a11y-live', 'a11y-cell', 'a11y-toast'])
      new MutationObserver(() => spoken.push(id + ': ' + document.getElementById(id).textContent))
        .observe(document.getElementById(id), {childList: true, characterData: true, subtree: true});
  });
  const heard = [], narrations = [];
  for (const stage of ['scores', 'attn', 'output']) {
    let s = await state();
    for (let i = 0; i < 20 && s.stage !== stage; i++) s = await press('ArrowRight');
    const f = await page.evaluate(() => attnviz.frame());
    narrations.push(f.narration);
    const live = await page.evaluate(() => document.getElementById('a11y-live').textContent);
    check(live.includes(f.narration) && live.includes(f.formula) && s.stage === stage,
          `the live region says ${stage}'s title, formula and narration (“${live.split('\n')[0]}”)`);
  }
  await page.keyboard.press('y'); // (its notice is read while it shows: settled() waits until it is gone)
  await page.waitForFunction(() => document.getElementById('a11y-toast').textContent !== '', null, {timeout: 8000}).catch(() => {});
  const toast = await page.evaluate(() => document.getElementById('a11y-toast').textContent);
  check(/Cell cursor/.test(toast), `the window's notice in the status region (“${toast}”)`);
  let s = await settled();
  await page.waitForFunction(() => attnviz.a11y().pointed && document.getElementById('a11y-cell').textContent.includes(attnviz.a11y().pointed.derivation),
                             null, {timeout: 8000}).catch(() => {});
  let d = await page.evaluate(() => attnviz.a11y());
  let cell = await page.evaluate(() => document.getElementById('a11y-cell').textContent);
  check(d.pointed && d.pointed.cursor && cell.includes(d.pointed.derivation) && d.pointed.derivation.includes('='),
        `Y: the cell cursor's cell and its worked sum in the cell's live region (“${cell.replace(/\n/g, ' ⏎ ')}”)`);
  s = await press('ArrowRight');
  await page.waitForFunction((c) => document.getElementById('a11y-cell').textContent !== c, cell, {timeout: 8000}).catch(() => {});
  d = await page.evaluate(() => attnviz.a11y());
  const cell2 = await page.evaluate(() => document.getElementById('a11y-cell').textContent);
  check(d.pointed && d.pointed.col === 1 && cell2 !== cell && cell2.includes(d.pointed.value),
        `→ moves the cursor (column ${d.pointed && d.pointed.col}), the new cell is read (“${cell2.split('\n')[0]}”)`);
  const marked = await page.evaluate(() => document.querySelectorAll('#a11y td.at').length);
  check(marked === 1, `the cursor's cell is marked in its table (${marked})`);
  await press('Escape');
  for (const t of await page.evaluate(() => spoken)) { heard.push(t); console.log('spoken: ' + t.replace(/\n/g, ' ⏎ ')); }
  // the transcript (issue 40's closing note): every change of the live regions and the status
  // region, in order, as a screen reader is handed it, to build/web-transcript.txt
  const names = {'a11y-live': 'stage (live region)', 'a11y-cell': 'cell (live region)', 'a11y-toast': 'notice (status)'};
  const lines = heard.filter((t) => !/^[a-z0-9-]+: $/.test(t)).map((t) => {
    const at = t.indexOf(': ');
    return `[${names[t.slice(0, at)]}]\n${t.slice(at + 2)}\n`;
  });
  const out = path.resolve('build/web-transcript.txt');
  fs.writeFileSync(out, '# attnviz in the page: what its live regions said, in order (tests/web/a11y_web.mjs):\n' +
                   '# the classic lesson in English, → to scores, attn and output, then Y (the cell cursor), →, Esc\n\n' + lines.join('\n'));
  const text = fs.readFileSync(out, 'utf8');
  check(heard.length >= 4 && narrations.every((n) => n && text.includes(n)) &&
        /\[cell \(live region\)\]/.test(text) && /\[notice \(status\)\]/.test(text),
        `the transcript: ${heard.length} utterances, ${lines.length} written to ${path.relative(process.cwd(), out)}`);

  // ---- tables: captions, headers, the values as the screen writes them ----------------
  const t = await page.evaluate(() => {
    const tb = document.querySelector('#a11y-tables table');
    return {caption: tb.caption.textContent, cols: tb.tHead.rows[0].cells.length, rowHead: tb.tBodies[0].rows[0].cells[0].tagName,
            scope: tb.tBodies[0].rows[0].cells[0].scope, n: document.querySelectorAll('#a11y-tables table').length,
            panels: attnviz.a11y().panels.length};
  });
  check(t.n === t.panels && t.rowHead === 'TH' && t.scope === 'row' && t.caption.length > 2,
        `every panel a table with a caption and row/column headers (${t.n} tables; “${t.caption}”)`);

  // ---- the keyboard: skip link, the layer's buttons, no trap ----------------------------
  await open('lesson=arange-2x4x4&lang=en');
  s = await settled();
  await page.keyboard.press('Shift+Tab');
  let f = await page.evaluate(() => ({id: document.activeElement.id, outline: getComputedStyle(document.activeElement).outlineStyle,
                                      top: document.activeElement.getBoundingClientRect().top}));
  check(f.id === 'skip' && f.outline === 'solid' && f.top >= 0, `Shift+Tab leaves the canvas for the skip link, its focus ring seen (${JSON.stringify(f)})`);
  const ring = await page.evaluate(() => { document.getElementById('canvas').focus(); return getComputedStyle(document.getElementById('canvas')).outlineStyle; });
  check(ring === 'solid', `the canvas shows its focus ring (${ring})`);
  await openLayer();
  const buttons = await page.evaluate(() => [...document.querySelectorAll('#a11y-controls button')].map((b) => b.textContent));
  const did = [];
  for (let i = 0; i < buttons.length; i++) {
    const before = await state();
    await page.evaluate((k) => document.querySelectorAll('#a11y-controls button')[k].focus(), i);
    const seen = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    await page.keyboard.press('Enter');
    await page.waitForFunction((n) => attnviz.state().events > n, before.events, {timeout: 5000}).catch(() => {});
    const after = await state();
    if (after.events > before.events && seen === 'solid') did.push(buttons[i]);
    if (buttons[i] === '中文') await page.waitForFunction(() => attnviz.state().lang === 'zh', null, {timeout: 20000}).catch(() => {});
    await settled().catch(() => {});
  }
  check(did.length === buttons.length, `every button of the layer does its key, with a focus ring (${did.length}/${buttons.length}: ${did.join(', ')})`);
  s = await state();
  check(s.lang === 'zh' && s.study.on, `the buttons reached the language and the study mode (${s.lang}, study ${s.study.on})`);
  await page.keyboard.press('Escape');
  f = await page.evaluate(() => document.activeElement.id);
  check(f === 'canvas', `Esc in the layer: back to the canvas (${f})`);

  const trap = async (query, keys, what) => {
    await open(query);
    let st = await settled();
    for (const k of keys) st = await press(k).catch(() => state());
    await page.keyboard.press('Shift+Tab');
    const at = await page.evaluate(() => document.activeElement.id);
    check(at !== 'canvas', `no keyboard trap: Shift+Tab leaves ${what} (focus on #${at})`);
  };
  await trap('lesson=arange-2x4x4', ['Enter', '5'], 'the lab\'s field while a value is typed');
  await trap('lesson=arange-2x4x4&study=1&stage=scores', ['1'], 'the study box while an answer is typed');
  await trap('lesson=induction-heads', ['i', 'z'], 'the text box (I)');

  // ---- prefers-reduced-motion -------------------------------------------------------------
  const moving = async (reducedMotion) => {
    const c = await browser.newContext({viewport: {width: 1280, height: 720}, deviceScaleFactor: 1, reducedMotion});
    const p = await c.newPage();
    await open('lesson=arange-2x4x4', p);
    await settled(p);
    const n = (await p.evaluate(() => attnviz.state())).events;
    await p.keyboard.press('ArrowRight');
    await p.waitForFunction((k) => attnviz.state().events > k, n, {timeout: 5000});
    await p.waitForTimeout(200); // (a transition takes 1.6 s)
    const busy = (await p.evaluate(() => attnviz.state())).busy;
    await c.close();
    return busy;
  };
  const still = await moving('reduce'), anim = await moving('no-preference');
  check(!still && anim, `prefers-reduced-motion: the transition is at its end at once (moving 0.2 s after →: ${still}; without it: ${anim})`);

  // ---- 200 % zoom and 320 CSS px ---------------------------------------------------------
  for (const [w, h, dpr, what] of [[640, 360, 2, '200 % zoom (640×360 CSS px at 2×)'], [320, 640, 1, '320 CSS px wide']]) {
    const c = await browser.newContext({viewport: {width: w, height: h}, deviceScaleFactor: dpr});
    const p = await c.newPage();
    const st = await open('lesson=arange-2x4x4&stage=scores', p);
    await settled(p);
    await openLayer(p);
    const m = await p.evaluate(() => {
      const r = (e) => e.getBoundingClientRect();
      const btn = [...document.querySelectorAll('#a11y-controls button')].map((b) => r(b).right);
      return {page: document.documentElement.scrollWidth, layer: r(document.getElementById('a11y')).width,
              buttons: Math.max(...btn), title: r(document.getElementById('a11y-title')).top,
              canvas: r(document.getElementById('canvas')).width};
    });
    const v = await axe(p);
    // (the window is at least 480 px wide: at 320 CSS px its pixels are scaled into the page)
    check(m.page <= w && m.layer <= w && m.buttons <= w && m.title >= 0 && m.canvas <= w &&
          st.width === Math.max(480, w * dpr) && v.length === 0,
          `${what}: nothing wider than the page (${m.page}, layer ${m.layer}, buttons to ${Math.round(m.buttons)}, canvas ${m.canvas} CSS px), drawn at ${st.width}×${st.height}, axe ${v.length ? v.join('; ') : '0 violations'}`);
    await c.close();
  }
  check(errors.length === 0, `accessibility: no JavaScript errors${errors.length ? ': ' + errors.join('; ') : ''}`);
  await ctx.close();
}
