// present_web.mjs — make test-web's checks of the presenter as a second browser window (the
// page's F5; issue 40, 5), called by test_web.mjs with its browser, server and check():
//  - F5 on the audience page opens presenter.html (a popup) at the first stage, with the
//    lesson, "Now · step k of n", the narration, the teacher's notes, the next stage, the step
//    list and a running timer, as the window's own texts (attnviz_presenter);
//  - the presenter window follows the audience page: a stage (→), a head (]), the language
//    (L: Chinese, the words and <html lang> too), and the other way: its →, ], L and its
//    buttons step the audience page;
//  - closing the presenter window leaves the page working (a key still steps it); F5 opens it
//    again; closing the audience page leaves the presenter window's timer running with a notice
//    and a button that opens the page again where it was, which it then follows;
//  - axe-core finds no WCAG 2.1 A/AA violation in the presenter window (English and Chinese).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const AXE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export async function presenterWindow({browser, base, check}) {
  const context = await browser.newContext({viewport: {width: 1280, height: 720}, deviceScaleFactor: 1});
  const errors = [];
  context.on('page', (p) => p.on('pageerror', (e) => errors.push(p.url().replace(/.*\//, '') + ': ' + e.message)));
  const page = await context.newPage();
  const state = (p = page) => p.evaluate(() => attnviz.state());
  const pres = (p) => p.evaluate(() => window.attnvizPresenter && attnvizPresenter.state());
  // waits until the presenter window p shows what the audience page a shows (stage, head, language)
  const follows = async (p, a = page, timeout = 10000) => {
    for (const end = Date.now() + timeout; Date.now() < end; await p.waitForTimeout(50)) {
      const [want, s] = [await state(a), await pres(p)];
      if (s && want && s.index === want.index && s.head === want.head && s.lang === want.lang) return true;
    }
    return false;
  };
  // a key typed in window p (the page or the presenter), then the audience page a handled it
  const press = async (p, key, a = page) => {
    const n = (await state(a)).events;
    await p.keyboard.press(key);
    await a.waitForFunction((k) => attnviz.state().events > k, n, {timeout: 10000, polling: 20}).catch(() => {});
  };
  const settled = (p = page) => p.waitForFunction(() => { const s = attnviz.state(); return s && !s.busy; }, null,
                                                  {timeout: 20000, polling: 50}).then(() => state(p));
  const axe = async (p) => {
    if (!(await p.evaluate(() => !!window.axe))) await p.addScriptTag({path: AXE});
    const r = await p.evaluate((tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']}), TAGS);
    return r.violations.map((v) => `${v.id} (${v.nodes.length})`);
  };

  await page.goto(base + 'index.html?lesson=arange-2x4x4&stage=scores&lang=en');
  await page.waitForFunction(() => window.attnviz !== undefined);
  await page.evaluate(() => attnviz.ready);
  await page.focus('#canvas');
  const t0 = Date.now();
  const [pw] = await Promise.all([context.waitForEvent('page', {timeout: 10000}).catch(() => null), page.keyboard.press('F5')]);
  if (!pw) {
    check(false, `presenter window: F5 on the page opened no second window (the page says: "${(await state()).toast}")`);
    await context.close();
    return;
  }
  await pw.waitForLoadState();
  const came = await follows(pw);
  let a = await settled(), s = await pres(pw);
  check(came && a.index === 0 && s && s.index === 0 && s.stages === a.stages && page.url() === (await page.url()),
        `presenter window: F5 opens presenter.html (${pw.url().replace(/.*\//, '')}) at the first stage in ${Date.now() - t0} ms; the page is at stage ${a.index}`);
  const dom = await pw.evaluate(() => ({
    now: document.getElementById('now').textContent, notes: document.getElementById('notes').textContent,
    narration: document.getElementById('narration').textContent, next: document.getElementById('next').textContent,
    steps: document.querySelectorAll('#steps li').length, on: document.querySelectorAll('#steps li.on').length,
    clock: document.getElementById('clock').textContent, lang: document.documentElement.lang}));
  check(/^Now · step 1 of \d+: /.test(dom.now) && dom.narration.length > 20 && dom.notes.length > 0 && /^Next: /.test(dom.next) &&
        dom.steps > 3 && dom.on === 1 && /^Elapsed 00:00:0\d/.test(dom.clock) && dom.lang === 'en',
        `presenter window: shows "${dom.now}", the narration (${dom.narration.length} chars), the notes ("${dom.notes.slice(0, 40)}…"), "${dom.next}", ${dom.steps} steps (1 current), "${dom.clock}"`);
  const v0 = await axe(pw);

  // the audience page steps: the presenter follows (stage, head, language)
  await page.focus('#canvas');
  await press(page, 'ArrowRight');
  const f1 = await follows(pw);
  await press(page, ']');
  const f2 = await follows(pw);
  s = await pres(pw);
  check(f1 && f2 && s.index === 1 && s.head === 1, `presenter window follows the page: → then ] on the page, the presenter at stage ${s.index}, head ${s.head + 1}`);
  // ... and the other way: keys and buttons in the presenter window step the page
  await pw.bringToFront();
  await press(pw, 'ArrowRight');
  await press(pw, '[');
  a = await state();
  const f3 = await follows(pw);
  check(a.index === 2 && a.head === 0 && f3, `the page follows the presenter window: → and [ there, the page at stage ${a.index}, head ${a.head + 1}`);
  await pw.click('#b-prev');
  await page.waitForFunction(() => attnviz.state().index === 1, null, {timeout: 10000}).catch(() => {});
  await pw.click('#b-lang');
  await page.waitForFunction(() => attnviz.state().lang === 'zh', null, {timeout: 20000}).catch(() => {});
  a = await state();
  const f4 = await follows(pw, page, 20000);
  const zh = await pw.evaluate(() => ({lang: document.documentElement.lang, now: document.getElementById('now').textContent,
                                       latin: document.getElementById('b-next').textContent}));
  check(a.index === 1 && a.lang === 'zh' && f4 && zh.lang === 'zh-CN' && /^当前 · 第 \d+ 步/.test(zh.now) && !/[A-Za-z]/.test(zh.latin),
        `the presenter's buttons step the page: ← Previous, then 中文 (the page at stage ${a.index} in ${a.lang}; the presenter "${zh.now}", <html lang=${zh.lang}>)`);
  const v1 = await axe(pw);
  check(v0.length === 0 && v1.length === 0, `axe-core (WCAG 2.1 A/AA) in the presenter window, English and Chinese: ${[...v0, ...v1].join('; ') || '0 violations'}`);

  // closing the presenter leaves the page working; F5 opens it again
  await pw.close();
  await page.bringToFront();
  await page.focus('#canvas');
  await press(page, 'ArrowRight');
  a = await state();
  const listening = await page.evaluate(() => attnvizPresent.listening());
  const [pw2] = await Promise.all([context.waitForEvent('page', {timeout: 10000}), page.keyboard.press('F5')]);
  await pw2.waitForLoadState();
  const again = await follows(pw2);
  check(a.index === 2 && !listening && again && (await pres(pw2)).index === 0,
        `presenter window closed: the page goes on (→: stage ${a.index}), F5 opens the presenter again, in step`);

  // closing the audience page leaves the presenter working: its timer, a notice, the page again
  const el0 = await pw2.evaluate(() => attnvizPresenter.elapsed());
  await page.close({runBeforeUnload: true});
  await pw2.waitForFunction(() => !attnvizPresenter.audience() && !document.getElementById('banner').hidden, null, {timeout: 10000}).catch(() => {});
  await pw2.waitForTimeout(1200);
  const alone = await pw2.evaluate(() => ({banner: document.getElementById('banner-text').textContent,
    reopen: !document.getElementById('reopen').hidden, elapsed: attnvizPresenter.elapsed(), clock: document.getElementById('clock').textContent}));
  check(alone.reopen && alone.banner.length > 10 && alone.elapsed > el0 + 1,
        `audience page closed: the presenter says "${alone.banner}", its timer runs on ("${alone.clock}"), with a button to open the page again`);
  const [back] = await Promise.all([context.waitForEvent('page', {timeout: 10000}), pw2.click('#reopen')]);
  await back.waitForFunction(() => window.attnviz !== undefined);
  await back.evaluate(() => attnviz.ready);
  const rejoined = await follows(pw2, back, 20000);
  await back.focus('#canvas');
  await press(back, 'ArrowRight', back);
  const stepped = await follows(pw2, back);
  const b = await state(back);
  check(rejoined && stepped && b.lang === 'zh' && b.index === 1 && !(await pw2.evaluate(() => document.getElementById('banner').hidden === false)),
        `the page opened again from the presenter (${back.url().replace(/.*\?/, '?')}) comes back where it was and is followed again (stage ${b.index})`);
  check(errors.length === 0, `presenter window: no script errors${errors.length ? ': ' + errors.slice(0, 3).join('; ') : ''}`);
  await context.close();
}
