// web_type.js — typing without a keyboard (issue 40, 4). A phone's or a tablet's on-screen
// keyboard opens only for a focused text field, and the window draws its study box, the lab's
// value and I's text on the canvas. So on a touch device (the touch bar is shown:
// web_touch.js), while the window takes typing (attnviz.state().typing: web_type.c), a real
// labelled <input> shows at the top of the page, focused, with an Enter button: what is typed
// there goes to the window as a keyboard's characters (attnviz.text), a deletion as
// Backspace, Enter (the button or the keyboard's) as Enter, Esc as Esc. The window stays
// the truth: the field takes its text again when it changed there (an answer read, a value
// applied), not while the user is typing.
'use strict';
(function () {
  const $ = (x) => document.getElementById(x);
  const form = $('typebar'), box = $('typebox'), label = $('typelabel'), enter = $('typeenter');
  if (!form) return;
  let what = null, sent = '', lastInput = 0;

  function text(s) { // characters for the window (SDL_TEXTINPUT)
    if (!s || !window.Module || !Module._attnviz_text) return 0;
    const n = s.length * 4 + 1, p = Module._malloc(n);
    Module.stringToUTF8(s, p, n);
    try { return Module._attnviz_text(p); } finally { Module._free(p); }
  }
  function touch() { return !!(window.attnvizTouch && attnvizTouch.barHeight() > 0); }
  function changed() {
    const s = window.attnviz && Module._attnviz_state ? attnviz.state() : null;
    const t = s && s.typing && touch() ? s.typing : null;
    if (!t) {
      if (!form.hidden) {
        form.hidden = true;
        if (document.activeElement === box) box.blur();
      }
      what = null;
      return;
    }
    const now = t.kind === 'value' ? t.kind : t.kind + '\n' + t.label; // (a value's label names the cell once typed)
    label.textContent = t.label;
    enter.textContent = t.enter;
    if (form.hidden || what !== now) { // a new field: the window's text, focused (the keyboard opens)
      form.hidden = false;
      box.value = sent = t.text;
      what = now;
      box.focus();
    } else if (t.text !== sent && Date.now() - lastInput > 500) {
      box.value = sent = t.text;
    }
  }
  box.addEventListener('input', () => { // the difference from what the window has: Backspaces, then characters
    lastInput = Date.now();
    const a = [...sent], b = [...box.value];
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    for (let k = a.length; k > i; k--) attnviz.key('Backspace', 0);
    text(b.slice(i).join(''));
    sent = box.value;
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    lastInput = 0;
    attnviz.key('Return', 0);
  });
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { e.preventDefault(); attnviz.key('Escape', 0); }
  });
  window.attnvizType = {changed, text};
})();
