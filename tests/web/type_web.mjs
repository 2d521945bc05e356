// type_web.mjs — make test-web's checks of typing without a keyboard (issue 40, 4), called by
// test_web.mjs with its browser, server and check(): on a phone (Chromium's device emulation,
// 390×844 at 3×, isMobile + hasTouch), wherever the window takes typing a real <input> is shown,
// labelled (its accessible name is the question, the cell's name or the text box's) and focused —
// what makes a phone's keyboard open — and what is typed there (CDP Input.insertText: as an
// on-screen keyboard or an IME delivers text, no key events) reaches the window:
//  - the study box: the answer typed there and its Enter button answer the question (right);
//    a deletion there is a Backspace for the window;
//  - the lab's value: a tap on an input cell shows its tooltip, a second tap selects it; the
//    value typed there and Enter edit the lesson (the dump has it);
//  - I's text box: the text typed there is the language model's new input;
//  - the field goes when typing ends, and is never shown on a desktop (no touch);
//  - a link then opened in the same tab opens its window at the page's size (issue 40);
//  - axe-core finds no WCAG 2.1 A/AA violation with the field shown.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const AXE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export async function typing({browser, base, check}) {
  const errors = [];
  const ctx = await browser.newContext({viewport: {width: 390, height: 844}, deviceScaleFactor: 3, isMobile: true, hasTouch: true});
  let p = null, cdp = null;
  const fingers = (type, pts) => cdp.send('Input.dispatchTouchEvent', {type, touchPoints: pts.map(([x, y], id) => ({x, y, id}))});
  const tap = async (x, y) => { await fingers('touchStart', [[x, y]]); await fingers('touchEnd', []); };
  const state = () => p.evaluate(() => attnviz.state());
  const until = async (f, arg) => {
    await p.waitForFunction(([src, a]) => (0, eval)(src)(attnviz.state(), a), [f.toString(), arg], {timeout: 10000, polling: 30}).catch(() => {});
    return state();
  };
  const open = async (query) => { // in a new tab (a phone's zoom into a focused field stays with its tab)
    if (p) await p.close();
    p = await ctx.newPage();
    p.on('pageerror', (e) => errors.push(e.message));
    cdp = await ctx.newCDPSession(p);
    await p.goto(base + 'index.html?' + query);
    await p.waitForFunction(() => window.attnviz !== undefined);
    await p.evaluate(() => attnviz.ready);
    return p.waitForFunction(() => { const s = attnviz.state(); return s && !s.busy; }, null, {timeout: 20000, polling: 50})
      .then(state, state);
  };
  // the field as the page shows it: shown, its accessible name, focused, its value
  const field = () => p.evaluate(async () => {
    const f = document.getElementById('typebar'), box = document.getElementById('typebox'), r = box.getBoundingClientRect();
    return {shown: !f.hidden && r.width > 100 && r.height >= 44, name: box.labels[0] ? box.labels[0].textContent : '',
            focused: document.activeElement === box, value: box.value, top: r.top};
  });
  const fieldShown = () => p.waitForFunction(() => !document.getElementById('typebar').hidden, null, {timeout: 10000}).catch(() => {});
  const type = async (s) => { await p.focus('#typebox'); await cdp.send('Input.insertText', {text: s}); };

  // the study box
  let s = await open('lesson=arange-2x4x4&lang=en&study=1');
  for (let i = 0; i < 12 && !s.study.asking; i++) {
    await p.evaluate(() => attnviz.key('Right', 0));
    s = await until((st, i0) => st.index !== i0 || st.study.asking, s.index);
  }
  await fieldShown();
  let f = await field();
  check(s.study.asking && f.shown && f.focused && f.name === s.study.question && s.typing && s.typing.kind === 'answer',
        `typing on a phone: the study box is a field at the top (shown ${f.shown}, focused ${f.focused}), labelled with the question ("${f.name.slice(0, 60)}…")`);
  await p.addScriptTag({path: AXE});
  const v = await p.evaluate((tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']}), TAGS);
  check(v.violations.length === 0, `typing on a phone: axe-core (WCAG 2.1 A/AA) with the field shown: ${v.violations.map((x) => x.id).join('; ') || '0 violations'}`);
  await type('9');
  s = await until((st) => st.typing && st.typing.text === '9');
  const typed9 = s.typing && s.typing.text;
  await p.keyboard.press('Backspace');
  s = await until((st) => st.typing && st.typing.text === '');
  check(typed9 === '9' && s.typing && s.typing.text === '', `typing on a phone: "9" typed there reaches the study box ("${typed9}"), a deletion there deletes it ("${s.typing && s.typing.text}")`);
  const ans = s.study.list ? s.study.answer.map((v) => Math.round(v)).join(', ') : String(Math.round(s.study.answer[0] * 1e4) / 1e4);
  await type(ans);
  await until((st, a) => st.typing && st.typing.text === a, ans);
  await p.tap('#typeenter');
  s = await until((st) => st.study.answered >= 1);
  check(s.study.answered === 1 && s.study.right === 1, `typing on a phone: the answer ${ans} typed in the field and its Enter button is right (${s.study.answered} answered, ${s.study.right} right)`);

  // the lab's value: tap an input cell twice (tooltip, then selected), type, Enter
  s = await open('lesson=arange-2x4x4&stage=input&lang=en');
  f = await field();
  check(!f.shown && s.typing === null, `typing on a phone: no field while nothing takes typing (${JSON.stringify(s.typing)})`);
  // a tap on the first input cell until its tooltip shows (the touch bar shows once the page
  // runs, and the canvas above it then takes its size: the cell is found again each time)
  let x = 0, y = 0;
  for (let i = 0; i < 5 && !s.hover; i++) {
    await p.waitForTimeout(300);
    s = await state();
    [x, y] = await p.evaluate(([r]) => {
      const c = document.getElementById('canvas').getBoundingClientRect(), st = attnviz.state(), k = c.width / st.width;
      return [c.left + (r[0] + r[2] * 0.1) * k, c.top + (r[1] + r[3] * 0.1) * k];
    }, [s.result]);
    await tap(x, y);
    s = await until((st) => st.hover !== null);
  }
  const trail = [JSON.stringify(s.hover)];
  for (let i = 0; i < 3 && s.typing === null; i++) { // (a tap held too long under load is no tap: again)
    await p.waitForTimeout(300);
    await tap(x, y);
    s = await until((st) => st.typing !== null);
    trail.push(JSON.stringify(s.hover));
  }
  await fieldShown();
  f = await field();
  check(s.typing && s.typing.kind === 'value' && f.shown && f.focused && f.name.length > 0,
        `typing on a phone: a second tap on an input cell selects it, a field for its value shows ("${f.name}", focused ${f.focused})` +
        (s.typing ? '' : ` (taps at ${Math.round(x)},${Math.round(y)} of result ${s.result}: hover ${trail.join(' → ')}, toast "${s.toast}", ${s.events} events)`));
  await type('-2.5');
  s = await until((st) => st.typing && st.typing.text.length >= 4);
  const label = s.typing ? s.typing.label : '';
  await p.focus('#typebox');
  await p.keyboard.press('Enter');
  await p.waitForFunction(() => attnviz.state().edited, null, {timeout: 10000, polling: 30}).catch(() => {});
  s = await state();
  const dump = JSON.parse(await p.evaluate(() => attnviz.dump()));
  check(s.edited && dump.stages[0].data[0] === -2.5, `typing on a phone: -2.5 typed there and Enter edit the cell ("${label}"; the first input ${dump.stages[0].data[0]})`);

  // I's text box of a language model
  s = await open('lesson=tiny-lm-fortunes&lang=en');
  await p.evaluate(() => attnviz.key('I', 0));
  s = await until((st) => st.typing && st.typing.kind === 'text');
  await fieldShown();
  f = await field();
  const before = s.typing ? s.typing.text : '';
  check(f.shown && f.focused && f.value === before && f.name.length > 0, `typing on a phone: I's text box is a field ("${f.name}") holding the lesson's text ("${before.slice(0, 30)}")`);
  await type(' cat');
  s = await until((st, b) => st.typing && st.typing.text === b + ' cat', before);
  check(s.typing && s.typing.text === before + ' cat', `typing on a phone: " cat" typed there is in the window's text box ("${s.typing && s.typing.text.slice(-20)}")`);
  await p.focus('#typebox');
  await p.keyboard.press('Enter');
  s = await until((st) => st.typing === null);
  await p.waitForFunction(() => document.getElementById('typebar').hidden, null, {timeout: 5000}).catch(() => {});
  f = await field();
  check(s.typing === null && !f.shown, `typing on a phone: Enter reads the text, the field goes (typing ${JSON.stringify(s.typing)}, field shown ${f.shown})`);

  // then a link in the same tab (issue 40: the next page's canvas opened at the wrong size): the
  // window at the page's size × devicePixelRatio. Chromium sends a phone's page a resize while
  // it loads (one more is sent here to be sure) and the program comes late (its WebAssembly held
  // 1.5 s, as on a slow phone): the page sized the canvas's CSS then, and SDL opened its window
  // at that CSS size (480×787 on this 1170×2361 screen, stretched ×2.4).
  await p.addInitScript(() => {
    const late = (f) => (...a) => new Promise((r) => setTimeout(r, 1500)).then(() => f.apply(WebAssembly, a));
    WebAssembly.instantiateStreaming = late(WebAssembly.instantiateStreaming);
    WebAssembly.instantiate = late(WebAssembly.instantiate);
    addEventListener('DOMContentLoaded', () => setTimeout(() => dispatchEvent(new Event('resize')), 100));
  });
  await p.goto(base + 'index.html?lesson=arange-2x4x4&stage=scores&lang=en');
  await p.waitForFunction(() => window.attnviz !== undefined);
  await p.evaluate(() => attnviz.ready);
  await p.waitForTimeout(300);
  const g = await p.evaluate(() => {
    const s = attnviz.state(), c = document.getElementById('canvas').getBoundingClientRect(), r = devicePixelRatio;
    return {app: [s.width, s.height], css: [c.width, c.height], stage: s.stage,
            want: [Math.round(innerWidth * r), Math.round((innerHeight - attnvizTouch.barHeight()) * r)]};
  });
  check(g.app[0] === g.want[0] && g.app[1] === g.want[1] && Math.abs(g.css[0] * 3 - g.app[0]) <= 3,
        `typing on a phone, then a link in the same tab (its program late): the window ${g.app.join('×')} px, the page ${g.want.join('×')} (canvas ${g.css.join('×')} CSS px at 3×; stage ${g.stage})`);
  check(errors.length === 0, `typing on a phone: no script errors${errors.length ? ': ' + errors.slice(0, 3).join('; ') : ''}`);
  await ctx.close();

  // a desktop (no touch) types on the canvas: no field
  const d = await browser.newContext({viewport: {width: 1280, height: 720}});
  const dp = await d.newPage();
  await dp.goto(base + 'index.html?lesson=arange-2x4x4&lang=en&study=1&stage=scores');
  await dp.waitForFunction(() => window.attnviz !== undefined);
  await dp.evaluate(() => attnviz.ready);
  await dp.waitForTimeout(500);
  const ds = await dp.evaluate(() => ({typing: attnviz.state().typing, shown: !document.getElementById('typebar').hidden,
                                       focus: document.activeElement && document.activeElement.id}));
  check(!ds.shown && ds.focus === 'canvas', `typing on a desktop: no field (the canvas keeps the focus; typing ${JSON.stringify(ds.typing && ds.typing.kind)})`);
  await d.close();
}
