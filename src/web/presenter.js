// presenter.js — presenter.html: the presenter as a second browser window (the page's F5;
// issue 40, 5), kept in step with the audience page (web_present.js says how) over the
// BroadcastChannel named in its address (?channel=ID). What the desktop's presenter window
// shows, as text: the lesson, the elapsed time and the clock, "Now · step k of n", the
// narration, the teacher's notes, the next stage and its narration, the step list; its keys
// and buttons are the audience window's keys (either window steps both). Closing the
// audience page leaves this one with its timer and notes, and a button that opens the page
// again where it was (it joins this channel). For tests: window.attnvizPresenter.
'use strict';
(function () {
  const id = new URLSearchParams(location.search).get('channel') || '';
  const $ = (x) => document.getElementById(x);
  const channel = window.BroadcastChannel ? new BroadcastChannel('attnviz-present-' + id) : null;
  window.attnvizPresenterChannel = id; // (the audience page opened from here joins it)
  let state = null, here = null, start = Date.now(), audience = false, words = null;
  // before the first state: both languages (the audience's words come with its state)
  const WAITING = 'Waiting for the audience page… · 正在等待观众页面…';

  function fmt(s, ...args) { return s.replace(/\{(\d)\}/g, (m, k) => args[k - 1]); }
  function tick() {
    const el = Math.floor((Date.now() - start) / 1000), two = (n) => String(n).padStart(2, '0');
    const elapsed = two(Math.floor(el / 3600)) + ':' + two(Math.floor(el / 60) % 60) + ':' + two(el % 60);
    const d = new Date(), clock = two(d.getHours()) + ':' + two(d.getMinutes());
    $('clock').textContent = words ? fmt(words.time, elapsed, clock) : elapsed + '  ·  ' + clock;
  }
  function banner(text, reopen) {
    $('banner').hidden = !text;
    $('banner-text').textContent = text || '';
    $('reopen').hidden = !reopen;
  }
  let shownAt = 0; // when the first state was shown (ms since the epoch: make bench-web)
  function show(s) {
    if (!state) shownAt = performance.timeOrigin + performance.now();
    state = s;
    words = s.words;
    document.documentElement.lang = s.lang === 'zh' ? 'zh-CN' : 'en';
    document.title = words.title;
    $('title').textContent = s.lesson;
    $('now').textContent = s.now;
    $('head').textContent = fmt(words.web_head, s.head + 1, s.heads);
    $('narration-title').textContent = words.narration;
    $('narration').textContent = s.narration;
    $('notes-title').textContent = words.notes;
    $('notes').textContent = s.notes || words.no_notes;
    $('next').textContent = s.study ? words.web_study : s.next;
    $('next-narration').textContent = s.next_narration;
    $('next-narration').hidden = !s.next_narration;
    $('steps-title').textContent = words.steps;
    const ol = $('steps');
    ol.textContent = '';
    for (const st of s.steps) {
      const li = document.createElement('li');
      li.textContent = st.label;
      if (st.on) { li.className = 'on'; li.setAttribute('aria-current', 'step'); } else if (st.past) li.className = 'past';
      ol.append(li);
    }
    $('b-prev').textContent = words.web_prev;
    $('b-next').textContent = words.web_next;
    $('b-hprev').textContent = words.web_head_prev;
    $('b-hnext').textContent = words.web_head_next;
    $('b-lang').textContent = words.web_lang;
    $('b-restart').textContent = words.web_restart;
    $('reopen').textContent = words.web_reopen;
    $('controls').setAttribute('aria-label', words.web_controls);
    $('keys').textContent = words.web_keys;
    tick();
  }
  function key(name, mods) {
    if (channel && audience) channel.postMessage({type: 'key', name, mods: mods || 0});
  }
  if (channel) {
    channel.onmessage = (e) => {
      const m = e.data || {};
      if (m.type === 'state') {
        audience = true;
        here = m.here;
        banner(null);
        show(m.state);
      } else if (m.type === 'audience') {
        channel.postMessage({type: 'hello'});
      } else if (m.type === 'restart') {
        start = Date.now();
        tick();
      } else if (m.type === 'bye') {
        audience = false;
        banner(words ? words.web_closed : 'The audience page is closed. · 观众页面已关闭。', here !== null);
      }
    };
    channel.postMessage({type: 'hello'});
    window.addEventListener('pagehide', () => channel.postMessage({type: 'bye'}));
  }
  if (!state) { $('now').textContent = WAITING; banner(null); }
  for (const b of document.querySelectorAll('#controls button[data-key]'))
    b.addEventListener('click', () => key(b.dataset.key));
  $('b-restart').addEventListener('click', () => { start = Date.now(); tick(); });
  $('reopen').addEventListener('click', () => {
    if (here !== null) window.open('index.html?' + here, '_blank');
  });
  // the audience window's keys (src/view/keymap.c) that present: stages, head, language, black, play
  const KEYS = {ArrowRight: 'Right', ArrowLeft: 'Left', ' ': 'Space', PageDown: 'PageDown', PageUp: 'PageUp',
                Home: 'Home', End: 'End', '[': '[', ']': ']', l: 'L', L: 'L', '.': '.', p: 'P', P: 'P'};
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey) return;
    if (e.key === 'F5') { e.preventDefault(); start = Date.now(); tick(); return; } // (from zero, as F5 on the page)
    if ((e.key === ' ' || e.key === 'Enter') && e.target instanceof HTMLButtonElement) return; // (the button's own)
    const name = KEYS[e.key];
    if (!name) return;
    e.preventDefault();
    key(name);
  });
  setInterval(tick, 1000);
  tick();
  window.attnvizPresenter = {
    state: () => state,
    audience: () => audience,
    elapsed: () => (Date.now() - start) / 1000,
    shownAt: () => shownAt,
  };
})();
