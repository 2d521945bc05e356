// web.js — the page around attnviz.wasm (the browser build; see web_main.c).
//
// The URL is the command line:
//   index.html?lesson=causal-decoder&stage=attn&lang=zh&batch=1&head=0&projector=1&study=1
//   lesson=NAME            a shipped lesson (lessons/NAME.json)
//   lesson=path/x.json     a lesson file on the same site (fetched; another site is refused)
// It sizes the canvas to the page × devicePixelRatio, keeps the user's data folder
// (study progress, saved lessons) in IndexedDB, hands the files the user saves to
// the browser as downloads (E's folder of frames as one .zip), fetches the Chinese
// font the first time Chinese is shown, opens a lesson file dropped on the page,
// and offers window.attnviz for tests and tools:
//   attnviz.ready      a Promise, resolved once the first frame is drawn (rejected with
//                      the program's one-line error when it cannot start)
//   attnviz.state()    stage, language, slice, study, toast (JSON)
//   attnviz.frame()    the frame on screen as --describe writes one
//   attnviz.dump()     the lesson on screen (edits applied) as --dump writes it
//   attnviz.describe(w, h)   the lesson file as `--describe --size WxH`
//   attnviz.frameTimes()     ms of each frame drawn since the last call (make bench-web)
//   attnviz.open(path) a file in the page's file system, as if dropped
//   attnviz.sync()     a Promise: the data folder written to IndexedDB
//   attnviz.errors     the lines the program wrote to stderr
'use strict';
(function () {
  const params = new URLSearchParams(location.search);
  const canvas = document.getElementById('canvas');
  const statusBox = document.getElementById('status');
  const statusText = document.getElementById('status-text');
  const HOME = '/home/web_user';
  const DATA = HOME + '/.local/share/attnviz';   // user_dir.c's folder: progress.json, lessons/
  const WORK = HOME + '/attnviz';                 // where S and E write before the download
  const CJK = '/attnviz/fonts/wqy-microhei.ttc';
  const errors = [];
  let fontState = 'none';                         // none, loading, here, failed
  let readyResolve, readyReject;
  const ready = new Promise((resolve, reject) => { readyResolve = resolve; readyReject = reject; });
  ready.catch(() => {}); // (the page shows the reason; a caller of attnviz.ready gets it too)

  function flag(name) {
    const v = params.get(name);
    return v !== null && v !== '0' && v !== 'false' && v !== 'no';
  }
  function lang() {
    const v = (params.get('lang') || '').toLowerCase();
    if (v === 'zh' || v === 'en') return v;
    return (navigator.language || '').toLowerCase().startsWith('zh') ? 'zh' : 'en';
  }
  function showStatus(html, isError) {
    statusText.textContent = '';
    if (isError) {
      const pre = document.createElement('pre');
      pre.textContent = html;
      statusText.appendChild(pre);
    } else {
      statusText.textContent = html;
    }
    statusBox.hidden = false;
  }

  // The canvas: the page's CSS size, drawn at device pixels (crisp on HiDPI).
  function cssSize() {
    return [Math.max(320, window.innerWidth), Math.max(240, window.innerHeight)];
  }
  function deviceSize() {
    const [w, h] = cssSize();
    const r = window.devicePixelRatio || 1;
    return [Math.round(w * r), Math.round(h * r)];
  }
  function fitCanvas() {
    const [w, h] = cssSize();
    canvas.style.width = w + 'px';
    canvas.style.height = h + 'px';
  }
  let resizeQueued = false;
  window.addEventListener('resize', () => {
    if (resizeQueued) return;
    resizeQueued = true;
    requestAnimationFrame(() => {
      resizeQueued = false;
      const [w, h] = deviceSize();
      if (Module._attnviz_resize) Module._attnviz_resize(w, h);
      fitCanvas();
    });
  });

  // The lesson named in the URL: a shipped one, or a .json on the same site.
  async function lessonPath() {
    const v = params.get('lesson');
    if (!v) return null;
    if (/^[A-Za-z0-9_-]+$/.test(v)) return '/attnviz/lessons/' + v + '.json';
    const url = new URL(v, location.href);
    if (url.origin !== location.origin) throw new Error('lesson=' + v + ': a lesson file must be on this site (' + location.origin + ')');
    const res = await fetch(url);
    if (!res.ok) throw new Error('lesson=' + v + ': ' + res.status + ' ' + res.statusText);
    const name = decodeURIComponent(url.pathname.split('/').pop() || 'lesson.json').replace(/[^A-Za-z0-9_.-]/g, '_');
    Module.FS.mkdirTree('/tmp/url');
    const path = '/tmp/url/' + name;
    Module.FS.writeFile(path, new Uint8Array(await res.arrayBuffer()));
    return path;
  }

  async function loadCjk() {
    if (fontState === 'here') return true;
    fontState = 'loading';
    try {
      const res = await fetch('fonts/wqy-microhei.ttc');
      if (!res.ok) throw new Error(res.status + ' ' + res.statusText);
      Module.FS.writeFile(CJK, new Uint8Array(await res.arrayBuffer()));
      fontState = 'here';
      return true;
    } catch (e) {
      fontState = 'failed';
      console.error('attnviz: the Chinese font could not be fetched: ' + e.message);
      return false;
    }
  }

  function syncData(populate) {
    return new Promise((resolve) => {
      Module.FS.syncfs(populate, (err) => {
        if (err) console.error('attnviz: IndexedDB: ' + err);
        resolve(!err);
      });
    });
  }
  let syncing = null;
  function sync() {
    if (!syncing) syncing = syncData(false).finally(() => { syncing = null; });
    return syncing;
  }

  // Downloads: one file as it is, a folder (E's frames) as one stored .zip.
  function download(name, bytes, type) {
    const url = URL.createObjectURL(new Blob([bytes], {type}));
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }
  const crcTable = (() => {
    const t = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
      t[n] = c >>> 0;
    }
    return t;
  })();
  function crc32(b) {
    let c = 0xFFFFFFFF;
    for (let i = 0; i < b.length; i++) c = crcTable[(c ^ b[i]) & 0xFF] ^ (c >>> 8);
    return (c ^ 0xFFFFFFFF) >>> 0;
  }
  function zip(files) { // [{name, data}] → a zip with every file stored (PNGs are compressed already)
    const enc = new TextEncoder(), parts = [], central = [];
    let off = 0;
    for (const f of files) {
      const name = enc.encode(f.name), crc = crc32(f.data), n = f.data.length;
      const local = new DataView(new ArrayBuffer(30));
      local.setUint32(0, 0x04034b50, true); local.setUint16(4, 20, true); local.setUint16(6, 0x0800, true);
      local.setUint32(14, crc, true); local.setUint32(18, n, true); local.setUint32(22, n, true);
      local.setUint16(26, name.length, true);
      parts.push(local, name, f.data);
      const cen = new DataView(new ArrayBuffer(46));
      cen.setUint32(0, 0x02014b50, true); cen.setUint16(4, 20, true); cen.setUint16(6, 20, true);
      cen.setUint16(8, 0x0800, true); cen.setUint32(16, crc, true); cen.setUint32(20, n, true);
      cen.setUint32(24, n, true); cen.setUint16(28, name.length, true); cen.setUint32(42, off, true);
      central.push(cen, name);
      off += 30 + name.length + n;
    }
    const size = central.reduce((s, p) => s + p.byteLength, 0);
    const end = new DataView(new ArrayBuffer(22));
    end.setUint32(0, 0x06054b50, true); end.setUint16(8, files.length, true); end.setUint16(10, files.length, true);
    end.setUint32(12, size, true); end.setUint32(16, off, true);
    return new Blob([...parts, ...central, end], {type: 'application/zip'});
  }
  function saved(path) {
    const FS = Module.FS, base = path.split('/').pop();
    if (path.startsWith('./')) path = WORK + path.slice(1); // (S and E write in the working folder)
    try {
      const st = FS.stat(path);
      if (FS.isDir(st.mode)) {
        const files = FS.readdir(path).filter((n) => n !== '.' && n !== '..')
          .map((n) => ({name: base + '/' + n, data: FS.readFile(path + '/' + n)}));
        download(base + '.zip', zip(files), 'application/zip');
        for (const n of FS.readdir(path)) if (n !== '.' && n !== '..') FS.unlink(path + '/' + n);
        FS.rmdir(path);
      } else {
        const type = base.endsWith('.png') ? 'image/png' : base.endsWith('.json') ? 'application/json' : 'application/octet-stream';
        download(base, FS.readFile(path), type);
        if (path.startsWith(WORK + '/')) FS.unlink(path); // (a saved lesson stays: the picker lists it)
      }
    } catch (e) {
      console.error('attnviz: ' + path + ': ' + e);
    }
    sync();
  }

  // A lesson file dropped on the page opens like one dropped on the desktop window.
  let dropN = 0;
  document.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
  document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
  document.addEventListener('drop', async (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    const file = e.dataTransfer && e.dataTransfer.files[0];
    if (!file || !Module._attnviz_open) return;
    const dir = '/tmp/drop' + (++dropN);
    Module.FS.mkdirTree(dir);
    const path = dir + '/' + file.name.replace(/[\/\0]/g, '_');
    Module.FS.writeFile(path, new Uint8Array(await file.arrayBuffer()));
    Module._attnviz_open(path);
  });

  function cString(p) {
    if (!p) return null;
    const s = Module.UTF8ToString(p);
    Module._free(p);
    return s;
  }
  function withString(s, fn) {
    const n = s.length * 4 + 1, p = Module._malloc ? Module._malloc(n) : 0;
    if (!p) return fn(s);
    Module.stringToUTF8(s, p, n);
    try { return fn(p); } finally { Module._free(p); }
  }

  // What web_main.c calls.
  window.attnvizPage = {
    saved,
    fetchFont() {
      if (fontState === 'loading') return 1;
      if (fontState === 'failed') return 0;
      loadCjk().then((ok) => { if (ok && Module._attnviz_font_arrived) Module._attnviz_font_arrived(); });
      return 1;
    },
    closed() {
      statusText.textContent = '';
      const p = document.createElement('p');
      p.textContent = 'attnviz has closed.';
      const b = document.createElement('button');
      b.textContent = 'Start again';
      b.onclick = () => location.reload();
      statusText.append(p, b);
      statusBox.hidden = false;
      canvas.hidden = true;
      sync();
    },
    failed() {
      const why = errors.join('\n') || 'attnviz could not start.';
      showStatus(why, true);
      readyReject(new Error(why));
    },
  };

  window.attnviz = {
    ready, errors,
    state: () => JSON.parse(cString(Module._attnviz_state()) || 'null'),
    frame: () => JSON.parse(cString(Module._attnviz_frame()) || 'null'),
    dump: () => cString(Module._attnviz_dump()),
    describe: (w, h) => cString(Module._attnviz_describe(w, h)),
    frameTimes: () => JSON.parse(cString(Module._attnviz_frame_times()) || '[]'),
    open: (path) => withString(path, (p) => Module._attnviz_open(p)),
    sync,
  };

  const [w0, h0] = deviceSize();
  window.Module = {
    canvas,
    print: (line) => console.log(line),
    printErr: (line) => { errors.push(line); console.error(line); },
    preRun: [() => {
      const FS = Module.FS;
      FS.mkdirTree(DATA);
      FS.mkdirTree(WORK);
      FS.mount(FS.filesystems.IDBFS, {}, DATA);
      FS.chdir(WORK); // S and E write here (then downloads)
      Module.addRunDependency('idbfs');
      syncData(true).then(() => Module.removeRunDependency('idbfs'));
    }],
    onRuntimeInitialized: async () => {
      const args = ['--size', w0 + 'x' + h0, '--lang', lang()];
      for (const k of ['stage', 'batch', 'head']) if (params.has(k)) args.push('--' + k, params.get(k));
      if (flag('projector')) args.push('--projector');
      if (flag('study')) args.push('--study');
      try {
        if (lang() === 'zh') await loadCjk();
        const path = await lessonPath();
        if (path) args.push(path);
      } catch (e) {
        errors.push('attnviz: ' + e.message);
        window.attnvizPage.failed();
        return;
      }
      Module.callMain(args); // (SDL sizes the canvas in device pixels; its CSS size only after,
      fitCanvas();           // or SDL would take the CSS size for the window's)
      if (errors.length && !Module._attnviz_state()) return; // (failed() showed them)
      statusBox.hidden = true;
      canvas.focus();
      const wait = () => {
        const s = window.attnviz.state();
        if (s && s.frames > 0) readyResolve(s); else requestAnimationFrame(wait);
      };
      wait();
      setInterval(sync, 3000); // progress.json after an answer, a saved lesson
      document.addEventListener('visibilitychange', () => { if (document.hidden) sync(); });
    },
  };
})();
