// web_touch.js — the page with a finger (issue 40, item 4): loaded before web.js.
//
// On the canvas, SDL's own touch handling (a finger as a mouse: a swipe that starts on an
// input cell would scrub its value) never sees a touch; this file reads the fingers instead:
//   tap        on a cell: its tooltip (the pointer put there, as a hover; in study mode a
//              tap on a key column answers, as a click; a second tap on the same cell is a
//              click: the lab selects it, web_type.js offers a field for its value); elsewhere (timeline, tabs, the
//              window's buttons, the picker) and over the help: a click there
//   swipe      left: the next stage, right: the previous one (the tooltip goes)
//   pinch      zooms the heatmap between the fingers; moving both fingers pans it; one
//              finger pans a zoomed heatmap
// and a control bar under the canvas on touch devices (pointer: coarse, or once a finger
// touched the page): ← → stage, ▶❚❚ play / pause, head − / +, layer − / +, the
// whole heatmap again, and "More", the accessible layer with its buttons for every other
// key (study, projector, numbers, language, the cell cursor, all keys). Nothing needs a
// hover or a key; typing (a study answer, a what-if value, I's text) still needs a keyboard.
//   attnvizTouch.barHeight()   CSS px the bar takes under the canvas (web.js sizes the canvas)
'use strict';
(function () {
  const SWIPE = 50;          // CSS px: a swipe's least horizontal travel (and 1.5× its vertical)
  const TAP_MOVE = 12;       // CSS px: a tap moves less than this
  const TAP_MS = 600;        // and lasts less than this
  const WORDS = {
    en: {bar: 'Touch controls', more: 'More', buttons: [
      ['prev', '←', 'Previous stage', 'Left', 0], ['play', '▶❚❚', 'Play / pause', 'P', 0],
      ['next', '→', 'Next stage', 'Right', 0], ['head-', 'H−', 'Previous head', '[', 0],
      ['head+', 'H+', 'Next head', ']', 0], ['layer-', 'L−', 'Previous layer', 'J', 1],
      ['layer+', 'L+', 'Next layer', 'J', 0], ['whole', '⤢', 'Whole heatmap (zoom out)', '0', 0]]},
    zh: {bar: '触控按钮', more: '更多', buttons: [
      ['prev', '←', '上一步', 'Left', 0], ['play', '▶❚❚', '播放 / 暂停', 'P', 0],
      ['next', '→', '下一步', 'Right', 0], ['head-', '头−', '上一个头', '[', 0],
      ['head+', '头+', '下一个头', ']', 0], ['layer-', '层−', '上一层', 'J', 1],
      ['layer+', '层+', '下一层', 'J', 0], ['whole', '⤢', '显示整张热图（缩小）', '0', 0]]},
  };
  const coarse = window.matchMedia ? window.matchMedia('(pointer: coarse)') : null;
  let bar = null, barLang = null;

  const canvas = () => document.getElementById('canvas');
  const running = () => window.attnviz && window.Module && Module._attnviz_state && attnviz.state();
  const pageLang = () => (document.documentElement.lang || '').startsWith('zh') ? 'zh' : 'en';

  // ---- the control bar ------------------------------------------------------------------
  function buildBar() {
    const lang = pageLang(), w = WORDS[lang];
    if (!bar || barLang === lang) return;
    bar.textContent = '';
    bar.setAttribute('aria-label', w.bar);
    for (const [id, glyph, label, key, shift] of w.buttons) {
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.touch = id;
      b.textContent = glyph;
      b.title = label;
      b.setAttribute('aria-label', /\p{L}/u.test(glyph) ? glyph + ', ' + label : label); // (the name holds what is seen)
      b.addEventListener('click', () => { if (running()) attnviz.key(key, shift); });
      bar.append(b);
    }
    const more = document.createElement('button');
    more.type = 'button';
    more.dataset.touch = 'more';
    more.textContent = w.more;
    more.addEventListener('click', () => { const s = document.getElementById('skip'); if (s) s.click(); });
    bar.append(more);
    barLang = lang;
  }
  function showBar(atStart) {
    if (!bar || !bar.hidden) return;
    bar.hidden = false;
    buildBar();
    if (!atStart) window.dispatchEvent(new Event('resize')); // (web.js: the canvas makes room for it)
  }

  // ---- the fingers on the canvas ------------------------------------------------------------
  // A mouse event on the canvas at (x, y) CSS px of the page, as SDL reads one.
  function mouse(type, x, y) {
    canvas().dispatchEvent(new MouseEvent(type, {clientX: x, clientY: y, button: 0, buttons: type === 'mousedown' ? 1 : 0,
                                                 bubbles: true, cancelable: true, view: window}));
  }
  // CSS px of the canvas → the window's output pixels.
  function toOutput(x, y) {
    const r = canvas().getBoundingClientRect(), s = attnviz.state();
    return [Math.round((x - r.left) * s.width / r.width), Math.round((y - r.top) * s.height / r.height)];
  }
  // A tap: the pointer there (its cell's tooltip); then, once the window has seen it, a
  // click unless it is on a cell (in study mode a click: a key column answers). A second tap
  // on the cell whose tooltip shows is a click: the lab selects an input or a weight there
  // (web_type.js then offers a field for its value), another cell's tooltip is pinned.
  let tapped = null; // the cell of the last tap that showed a tooltip: "stage panel row col"
  function tap(x, y) {
    const n = attnviz.state().events;
    mouse('mousemove', x, y);
    let waited = 0;
    const decide = () => {
      const s = attnviz.state();
      if (s.events <= n && waited++ < 30) { requestAnimationFrame(decide); return; }
      const cell = s.hover ? [s.index, s.hover.panel, s.hover.row, s.hover.col].join(' ') : null;
      if (s.hover && !s.study.asking && !s.help && cell !== tapped) { tapped = cell; return; } // (a tap closes the help, as a click)
      tapped = null;
      mouse('mousedown', x, y);
      mouse('mouseup', x, y);
    };
    requestAnimationFrame(decide);
  }
  let g = null; // the gesture: {fingers: Map id → {x0, y0, x, y}, t0, kind: 'one' | 'pan' | 'pinch' | 'done', d, cx, cy}
  const pending = {factor: 1, dx: 0, dy: 0, x: 0, y: 0, queued: false};
  function pinch(factor, dx, dy, x, y) { // (coalesced: one call to the window a browser frame)
    pending.factor *= factor, pending.dx += dx, pending.dy += dy, pending.x = x, pending.y = y;
    if (pending.queued) return;
    pending.queued = true;
    requestAnimationFrame(() => {
      pending.queued = false;
      const s = attnviz.state(), r = canvas().getBoundingClientRect();
      const [ox, oy] = toOutput(pending.x, pending.y), k = s.width / r.width;
      Module._attnviz_pinch(ox, oy, pending.factor, Math.round(pending.dx * k), Math.round(pending.dy * k));
      pending.factor = 1, pending.dx = pending.dy = 0;
    });
  }
  const spread = (f) => { const [a, b] = [...f.values()]; return Math.hypot(a.x - b.x, a.y - b.y); };
  const centre = (f) => { const [a, b] = [...f.values()]; return [(a.x + b.x) / 2, (a.y + b.y) / 2]; };
  function onTouch(e) {
    if (e.target !== canvas() || !running()) return;
    e.preventDefault();            // no mouse events made up by the browser, no page zoom
    e.stopImmediatePropagation();  // and SDL never sees the finger
    showBar();
    const now = e.timeStamp; // (when the finger moved, not when a busy page got to it)
    if (e.type === 'touchstart') {
      if (!g || g.kind === 'done' && e.touches.length === e.changedTouches.length) g = {fingers: new Map(), t0: now, kind: 'one'};
      for (const t of e.changedTouches) g.fingers.set(t.identifier, {x0: t.clientX, y0: t.clientY, x: t.clientX, y: t.clientY});
      if (g.fingers.size === 2 && g.kind !== 'done') {
        g.kind = 'pinch', g.d = spread(g.fingers);
        [g.cx, g.cy] = centre(g.fingers);
      } else if (g.fingers.size > 2) g.kind = 'done';
      return;
    }
    if (!g) return;
    for (const t of e.changedTouches) {
      const f = g.fingers.get(t.identifier);
      if (f) f.x = t.clientX, f.y = t.clientY;
    }
    if (e.type === 'touchmove') {
      if (g.kind === 'pinch' && g.fingers.size === 2) {
        const d = spread(g.fingers), [cx, cy] = centre(g.fingers);
        pinch(g.d > 0 ? d / g.d : 1, cx - g.cx, cy - g.cy, cx, cy);
        g.d = d, g.cx = cx, g.cy = cy;
      } else if (g.kind === 'one' || g.kind === 'pan') {
        const f = [...g.fingers.values()][0];
        if (g.kind === 'one' && Math.hypot(f.x - f.x0, f.y - f.y0) >= TAP_MOVE && attnviz.state().zoom > 1)
          g.kind = 'pan', g.px = f.x0, g.py = f.y0;
        if (g.kind === 'pan') { pinch(1, f.x - g.px, f.y - g.py, f.x, f.y); g.px = f.x, g.py = f.y; }
      }
      return;
    }
    // touchend, touchcancel
    if (g.kind === 'one' && e.type === 'touchend' && g.fingers.size === 1) {
      const f = [...g.fingers.values()][0], dx = f.x - f.x0, dy = f.y - f.y0;
      if (Math.hypot(dx, dy) < TAP_MOVE && now - g.t0 < TAP_MS) tap(f.x, f.y);
      else if (Math.abs(dx) >= SWIPE && Math.abs(dx) >= 1.5 * Math.abs(dy)) {
        mouse('mouseleave', f.x, f.y); // (the tooltip of the cell last tapped goes)
        attnviz.key(dx < 0 ? 'Right' : 'Left', 0);
      }
    }
    for (const t of e.changedTouches) g.fingers.delete(t.identifier);
    g.kind = 'done';
    if (e.touches.length === 0) g = null;
  }
  for (const type of ['touchstart', 'touchmove', 'touchend', 'touchcancel'])
    window.addEventListener(type, onTouch, {capture: true, passive: false});

  window.attnvizTouch = {
    barHeight: () => (bar && !bar.hidden ? bar.getBoundingClientRect().height : 0),
  };
  // (at once, before web.js sizes the canvas: the bar is above this script in the page)
  bar = document.getElementById('touchbar');
  if (bar) {
    new MutationObserver(buildBar).observe(document.documentElement, {attributes: true, attributeFilter: ['lang']});
    if (coarse && coarse.matches) showBar(true); // (web.js has not sized the canvas yet)
    if (coarse) coarse.addEventListener('change', () => { if (coarse.matches) showBar(); });
  }
})();
