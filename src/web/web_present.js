// web_present.js — the audience page's side of the presenter window (F5 in the page; issue 40, 5).
//
// The desktop's F5 opens a second window; the page opens presenter.html as a second browser
// window and keeps both in step over a BroadcastChannel named for this tab (kept in
// sessionStorage: a reload of the page finds its presenter window again):
//   presenter → page   hello (send the state), key {name, mods} (a key for the window: either
//                      window steps both), bye (closed: the page goes on alone)
//   page → presenter   audience (here again: say hello), state {state: attnviz_presenter()'s
//                      JSON, here: the address of where the window is}, restart (F5 again:
//                      the timer from zero), bye (the page closed: the presenter window keeps
//                      its timer and notes and offers to open the page again, which then joins
//                      this channel through window.opener)
// The state is sent after each drawn frame that changed it (web.js's layer update, at most
// every 150 ms), only while a presenter window listens.
'use strict';
(function () {
  const STORE = 'attnviz-present';
  let id = null;
  try { id = sessionStorage.getItem(STORE); } catch (e) { /* (no storage: a new channel) */ }
  try { // opened by a presenter window's "open the audience page again": its channel
    if (window.opener && window.opener.attnvizPresenterChannel) id = window.opener.attnvizPresenterChannel;
  } catch (e) { /* (another site's opener) */ }
  if (!id) id = Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
  try { sessionStorage.setItem(STORE, id); } catch (e) { /* (as above) */ }
  if (!window.BroadcastChannel) return; // (F5 then says the window could not open)
  const channel = new BroadcastChannel('attnviz-present-' + id);
  let win = null, listening = false, last = null;

  function snapshot() {
    if (!window.Module || !Module._attnviz_presenter) return null;
    const p = Module._attnviz_presenter();
    if (!p) return null;
    const s = Module.UTF8ToString(p);
    Module._free(p);
    return s;
  }
  function send(always) {
    if (!listening) return;
    const s = snapshot();
    if (s === null || (!always && s === last)) return;
    last = s;
    channel.postMessage({type: 'state', state: JSON.parse(s), here: window.attnviz.here()});
  }
  channel.onmessage = (e) => {
    const m = e.data || {};
    if (m.type === 'hello') { listening = true; send(true); }
    else if (m.type === 'key' && typeof m.name === 'string') window.attnviz.key(m.name, m.mods | 0);
    else if (m.type === 'bye') listening = false;
  };
  window.addEventListener('pagehide', () => channel.postMessage({type: 'bye'}));
  if (window.attnviz && window.attnviz.ready) window.attnviz.ready.then(() => channel.postMessage({type: 'audience'}), () => {});

  window.attnvizPresent = {
    // F5 (web_main.c): the presenter window opened, or brought forward with its timer from
    // zero; 0 when the browser did not open it (pop-ups blocked)
    open() {
      if (win && !win.closed) {
        win.focus();
        channel.postMessage({type: 'restart'});
        return 1;
      }
      win = window.open('presenter.html?channel=' + encodeURIComponent(id), 'attnviz-presenter-' + id,
                        'popup,width=1100,height=760');
      return win ? 1 : 0;
    },
    changed() { send(false); },
    listening: () => listening, // (for tests)
  };
})();
// F5 on the picture is the presenter, never the browser's reload (the window still gets the key)
document.addEventListener('keydown', (e) => {
  if (e.key === 'F5' && e.target === document.getElementById('canvas')) e.preventDefault();
}, true);
