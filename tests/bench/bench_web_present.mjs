// bench_web_present.mjs — make bench-web's rows for issue 43 of the presenter window and the
// language switch in the page (bench_web.mjs imports it; run with its browser and row()):
//   language switch: L on the classic lesson's attn stage at 1280×720 to the first frame drawn
//     in the other language, the Chinese font already fetched (one L before the rounds), 10
//     rounds alternating English and Chinese
//   presenter start: F5 on the page (the key's event time) to the presenter window's first
//     state shown (presenter.js), a new window each round (5 rounds)
export async function benchPresent({browser, base, row}) {
  const context = await browser.newContext({viewport: {width: 1280, height: 720}, deviceScaleFactor: 1});
  const page = await context.newPage();
  await page.goto(base + '?lesson=arange-2x4x4&stage=attn&lang=en');
  await page.waitForFunction(() => window.attnviz !== undefined);
  await page.evaluate(() => attnviz.ready);
  const settled = () => page.waitForFunction(() => { const s = attnviz.state(); return s && !s.busy; }, null, {timeout: 60000, polling: 20});
  await settled();
  // the font fetched once (then the page has it)
  await page.evaluate(() => attnviz.key('L', 0));
  await page.waitForFunction(() => attnviz.state().lang === 'zh', null, {timeout: 60000});
  await settled();
  const switches = [];
  for (let i = 0; i < 10; i++) {
    switches.push(await page.evaluate(() => new Promise((resolve) => {
      const s0 = attnviz.state(), want = s0.lang === 'zh' ? 'en' : 'zh', t0 = performance.now();
      attnviz.key('L', 0);
      const look = () => {
        const s = attnviz.state();
        if (s.lang === want && s.frames > s0.frames) resolve(performance.now() - t0); else requestAnimationFrame(look);
      };
      requestAnimationFrame(look);
    })));
    await settled();
  }
  row('web: language switch (L) → its frame, font fetched, 1280×720', switches, 100, 'ms');

  const starts = [];
  await page.evaluate(() => document.addEventListener('keydown', (e) => {
    if (e.key === 'F5') window.f5At = performance.timeOrigin + e.timeStamp;
  }, true));
  for (let i = 0; i < 5; i++) {
    await page.bringToFront();
    await page.focus('#canvas');
    const [pw] = await Promise.all([context.waitForEvent('page', {timeout: 20000}), page.keyboard.press('F5')]);
    await pw.waitForFunction(() => window.attnvizPresenter && attnvizPresenter.shownAt() > 0, null, {timeout: 20000, polling: 5});
    starts.push((await pw.evaluate(() => attnvizPresenter.shownAt())) - (await page.evaluate(() => window.f5At)));
    await pw.close();
    await settled();
  }
  row('web: presenter start, F5 → its window shows the stage', starts, 300, 'ms');
  await context.close();
}
