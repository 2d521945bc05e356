// bench_web_type.mjs — make bench-web's row of issue 39: "a character typed → every layer of the
// largest shipped model recomputed and the first frame drawn: ≤ 66 ms in the page". Called by
// bench_web.mjs with its browser, the site's address, its row() and the largest shipped lesson
// (the largest file in lessons/: subword-lm-fortunes.json); `desktop` (build/attnviz) checks the
// page's numbers for the typed text against the desktop's.
//
// The lesson opened by its link at the stage bench_edit's native row draws (probs), I's text box
// opened, then a sentence typed at its end one character at a time and taken back with
// Backspace (every key timed: as bench_edit's typing row, a token added and taken back). Each
// key: from the keydown event (its timeStamp, the renderer's clock) to the end of the first
// frame drawn with the new text (the page's attnvizPage.drawn(), called after app_frame drew it:
// the event handled, the lesson retexted, every layer and the unembedding computed, the frame
// drawn into the canvas). Checked for every key: that frame's text box holds the text typed so
// far and the frame's panels have the rows of the trace the page then settles on (no later frame
// brought the recomputed model); the fully typed text's attnviz.dump() equals the desktop's
// --dump --text of it, byte for byte. A second row: of that time, the frame's own (app_frame:
// the rest is the wait for the browser's next animation frame and the key's way to the page).
import {execFileSync} from 'node:child_process';

const TYPED = ' The dog sat on the rug by it.'; // 30 characters, then 30 Backspaces

export async function benchTyping({browser, base, row, largest, desktop}) {
  const context = await browser.newContext({viewport: {width: 1280, height: 720}, deviceScaleFactor: 1});
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}?lesson=${largest.replace(/\.json$/, '')}&stage=probs`);
  await page.waitForFunction(() => window.attnviz !== undefined);
  await page.evaluate(() => attnviz.ready);
  await page.focus('#canvas');
  await page.keyboard.press('i');
  await page.waitForFunction(() => { const t = attnviz.state().typing; return t && t.kind === 'text'; });
  const text0 = (await page.evaluate(() => attnviz.state())).typing.text;
  // the page's hooks: each keydown's time; each drawn frame's end, its text and its trace's rows
  await page.evaluate(() => {
    const rec = window.attnvizTyping = {key: 0, frames: []};
    addEventListener('keydown', (e) => { rec.key = e.timeStamp; }, true);
    const drawn = attnvizPage.drawn;
    attnvizPage.drawn = function () {
      const t = performance.now(), s = attnviz.state();
      rec.frames.push({t, key: rec.key, text: s.typing ? s.typing.text : null, rows: attnviz.frame().panels[0].shape[0],
                       app: attnviz.frameTimes().pop()}); // (app_frame's own time: web_main.c)
      return drawn.apply(this, arguments);
    };
  });
  const settled = () => page.waitForFunction(() => !attnviz.state().busy, null, {polling: 20, timeout: 30000});
  const keys = [...TYPED].map((c, i) => [c, text0 + TYPED.slice(0, i + 1)]);
  for (let i = TYPED.length - 1; i >= 0; i--) keys.push(['Backspace', text0 + TYPED.slice(0, i)]);
  const ms = [], app = [], wrong = [];
  let full = null;
  // one character typed and taken back first, not timed (as bench_edit draws once before timing)
  for (const [key, want] of [[TYPED[0], text0 + TYPED[0]], ['Backspace', text0], ...keys]) {
    await page.evaluate(() => { attnvizTyping.frames = []; });
    await page.keyboard.press(key === ' ' ? 'Space' : key);
    await page.waitForFunction((w) => attnvizTyping.frames.some((f) => f.text === w), want, {polling: 'raf', timeout: 30000});
    await settled();
    await page.waitForTimeout(50); // (any frame the key still brings)
    const r = await page.evaluate(() => ({frames: attnvizTyping.frames, rows: attnviz.frame().panels[0].shape[0],
                                           text: attnviz.state().typing.text}));
    const f = r.frames.find((x) => x.text === want);
    if (f.rows !== r.rows || r.text !== want) wrong.push(`${JSON.stringify(want)}: ${f.rows} rows drawn, ${r.rows} then`);
    if (key !== 'Backspace' && want === text0 + TYPED && !full) full = await page.evaluate(() => attnviz.dump());
    ms.push(f.t - f.key), app.push(f.app);
  }
  ms.splice(0, 2), app.splice(0, 2); // (the untimed pair)
  if (desktop) {
    const native = execFileSync(desktop, ['--dump', '--text', text0 + TYPED, `lessons/${largest}`],
                                {maxBuffer: 1 << 30}).toString();
    if (native !== full) wrong.push(`the typed text's dump() differs from the desktop's --dump --text`);
  }
  await context.close();
  if (wrong.length || errors.length) throw new Error(`web typing: ${[...wrong, ...errors].join('; ')}`);
  row(`web: a character typed → frame, ${largest}`, ms, 66, 'ms');
  row('web: of it, the frame (retext, layers, draw)', app, 66, 'ms');
}
