// web.js — the page around attnviz.wasm (the browser build; see web_main.c).
//
// The URL is the command line (read by the C program: src/app/url_args.h):
//   index.html?lesson=causal-decoder&stage=attn&lang=zh&batch=1&head=0&projector=1&study=1
//   lesson=NAME            a shipped lesson (lessons/NAME.json)
//   lesson=path/x.json     a lesson file on the same site (fetched; another site, or a
//                          redirect to one, is refused). Its copy is kept at
//                          /url/HOST/PATH (its query a folder of its own): the copy's
//                          path, which keys the study progress, is the URL's
// The address bar follows the window (lesson, stage, slice, language): a reload comes
// back where the student was. No key ends the session (the tab is closed instead).
// A link that cannot open shows why in plain words, with links to the first lesson
// and to every shipped lesson.
// It sizes the canvas to the page × devicePixelRatio, keeps the user's data folder
// (study progress, saved lessons) in IndexedDB, hands the files the user saves to
// the browser as downloads (E's folder of PNG frames as one .zip, its GIF or MP4 as the
// file: web_export.js makes the MP4), fetches the Chinese
// font the first time Chinese is shown, fetches each shipped lesson but the default the first
// time it is opened (the picker, a link: issue 39), opens a lesson file dropped on the page,
// and offers window.attnviz for tests and tools:
//   attnviz.ready      a Promise, resolved once the first frame is drawn (rejected with
//                      the program's one-line error when it cannot start)
//   attnviz.state()    stage, language, slice, study, toast, the learning views: backward,
//                      train (R: step, total, loss, held-out loss), compare (Ctrl+D) (JSON)
//   attnviz.frame()    the frame on screen as --describe writes one
//   attnviz.dump()     the lesson on screen (edits applied) as --dump writes it
//   attnviz.describe(w, h)   the lesson file as `--describe --size WxH`
//   attnviz.frameTimes()     ms of each frame drawn since the last call (make bench-web)
//   attnviz.benchForward(json, n)   ms of each of n forward passes of that lesson (make bench-web)
//   attnviz.heapUsed()  bytes malloc holds now (make bench-web's memory row)
//   attnviz.textCacheBytes()  of which the text texture cache (capped at 16 MiB)
//   attnviz.open(path) a file in the page's file system opened now, as if dropped (1: opened)
//   attnviz.lesson(name)   the shipped lesson NAME opened as the picker does (fetched first
//                      when it is not in the page: a Promise of 1 opened, 0 another asked for since)
//   attnviz.here()     the address's query that opens the window where it is now
//   attnviz.sync()     a Promise: the data folder written to IndexedDB
//   attnviz.errors     the lines the program wrote to stderr
//   attnviz.a11y()     the frame for the accessible layer (src/app/describe_a11y.h)
//   attnviz.key(name, mods)   a key for the window as if typed on the canvas (mods: 1 Shift,
//                      2 Ctrl, 3 both; true: Shift)
//   attnviz.train(n)   R's training for n steps, paused at the last (the checkpoints as
//                      `--train n`'s; Ctrl+S then downloads the trained lesson); 1: started
//   attnviz.compare(data)    the compare view (Ctrl+D) as `--compare SPEC --describe` (data:
//                      --dump's, with the Δ tensors); null when it is off
// Accessibility: beside the canvas, a layer generated from the frame's description
// (attnviz.a11y(), the same texts as --describe): the stage's title, formula (text and
// MathML), narration and the study box's question in a live region spoken on each change,
// the window's notices in a status region, the alt text, each panel as a table (caption, row and column headers with the token
// labels, the cells as the screen writes them) and the pointed cell (the cell cursor Y, or
// the pointer) with its tooltip's worked sum in a second live region. It is out of sight
// until the keyboard enters it (the skip link, Shift+Tab from the canvas), then over the
// lower part of the page with buttons for the main keys. Keys reach the window only while
// the canvas has the focus; Shift+Tab always leaves it (no keyboard trap: the lab's field,
// the study box and the text box included). prefers-reduced-motion: transitions jump to
// their end.
'use strict';
(function () {
  const canvas = document.getElementById('canvas');
  const statusBox = document.getElementById('status');
  const statusText = document.getElementById('status-text');
  const SHIPPED = '/attnviz/lessons/';
  const HOME = '/home/web_user';
  const DATA = HOME + '/.local/share/attnviz';   // user_dir.c's folder: progress.json, lessons/
  const WORK = HOME + '/attnviz';                 // where S and E write before the download
  const CJK = '/attnviz/fonts/wqy-microhei.ttc';
  const errors = [];
  const layer = document.getElementById('a11y');
  let fontState = 'none';                         // none, loading, here, failed
  let readyResolve, readyReject;
  const ready = new Promise((resolve, reject) => { readyResolve = resolve; readyReject = reject; });
  ready.catch(() => {}); // (the page shows the reason; a caller of attnviz.ready gets it too)

  let plan = null; // the address as the C program read it: {args, lesson, fetch, lang, error}
  function lang() {
    if (plan && plan.lang) return plan.lang;
    return (navigator.language || '').toLowerCase().startsWith('zh') ? 'zh' : 'en';
  }

  // The canvas: the page's CSS size, drawn at device pixels (crisp on HiDPI).
  function cssSize() {
    const bar = window.attnvizTouch ? attnvizTouch.barHeight() : 0; // (web_touch.js: the touch bar below)
    return [Math.max(320, window.innerWidth), Math.max(240, window.innerHeight - bar)];
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
  // Not before the window opens: SDL makes its window the canvas's CSS size when the canvas
  // has one (at a phone's 3×, 480×787 device pixels on a 1170×2361 screen, stretched), and
  // Chromium sends a page a resize while it loads (a phone's, at once; a page opened in the
  // tab where a field had the keyboard, before the program had started: issue 40). The
  // window opens at the size of that moment (deviceSize() at callMain).
  let resizeQueued = false, windowOpen = false;
  window.addEventListener('resize', () => {
    if (resizeQueued || !windowOpen) return;
    resizeQueued = true;
    requestAnimationFrame(() => {
      resizeQueued = false;
      const [w, h] = deviceSize();
      Module._attnviz_resize(w, h);
      fitCanvas();
    });
  });

  // lesson=path/x.json: fetched from this site (a redirect may stay on it, never leave
  // it: the address fetched in the end is checked) and copied to the path its URL names.
  class LinkError extends Error {
    constructor(kind, message) { super(message); this.kind = kind; }
  }
  async function fetchLesson(v) {
    const url = new URL(v, location.href), away = 'lesson=' + v + ': a lesson file must be on this site (' + location.origin + ')';
    if (url.origin !== location.origin) throw new LinkError('away', away);
    let res;
    try {
      res = await fetch(url);
    } catch (e) {
      throw new LinkError('fetch', 'lesson=' + v + ': could not be fetched (' + e.message + ')');
    }
    const final = new URL(res.url || url.href);
    if (final.origin !== location.origin)
      throw new LinkError('redirect', 'lesson=' + v + ': redirected to ' + final.origin + ', another site: a lesson file must be on this site (' + location.origin + ')');
    if (!res.ok) throw new LinkError(res.status === 404 ? 'missing' : 'fetch', 'lesson=' + v + ': ' + res.status + ' ' + res.statusText);
    const dirs = ['url', final.host, ...final.pathname.split('/').filter((p) => p !== '')];
    let name = final.pathname.endsWith('/') ? 'lesson.json' : dirs.pop();
    if (final.search) dirs.push(encodeURIComponent(final.search));
    const dir = '/' + dirs.map((d) => d.replace(/[\0]/g, '_')).join('/');
    Module.FS.mkdirTree(dir);
    const path = dir + '/' + name;
    Module.FS.writeFile(path, new Uint8Array(await res.arrayBuffer()));
    return path;
  }

  // The shipped lessons (issue 39): attnviz.data holds the default one and the manifest of all
  // (src/web/lesson_manifest.py: file, title, bytes, sha256); any other is fetched from the
  // site when it is opened — lessons/NAME.json?v=SHA (its bytes' address: the service worker
  // keeps it by that, sw.js) — and written where the window looks for it (SHIPPED).
  let shippedList = null;
  function manifest() { // {NAME.json: {file, title, bytes, sha256}}
    if (!shippedList) {
      shippedList = {};
      try {
        for (const e of JSON.parse(new TextDecoder().decode(Module.FS.readFile(SHIPPED + 'lessons.manifest'))).lessons) shippedList[e.file] = e;
      } catch (e) { console.error('attnviz: the lessons\' manifest: ' + e.message); }
    }
    return shippedList;
  }
  const fetching = {}; // NAME.json → its Promise (one fetch however often it is asked for)
  // The shipped lesson file NAME.json in the page's files (fetched first when it is not):
  // its path; a LinkError when it could not be fetched (status: the site's answer, 0 none).
  function shippedFile(file) {
    const path = SHIPPED + file, m = manifest()[file];
    if (!m || Module.FS.analyzePath(path).exists) return Promise.resolve(path);
    if (!fetching[file]) {
      fetching[file] = (async () => {
        const v = 'lessons/' + file + '?v=' + m.sha256;
        let res;
        try {
          res = await fetch(v);
        } catch (e) {
          throw Object.assign(new LinkError('fetch', v + ': could not be fetched (' + e.message + ')'), {status: 0});
        }
        if (!res.ok) throw Object.assign(new LinkError(res.status === 404 ? 'missing' : 'fetch', v + ': ' + res.status + ' ' + res.statusText), {status: res.status});
        const bytes = new Uint8Array(await res.arrayBuffer());
        Module.FS.writeFile(path, bytes);
        return path;
      })().finally(() => { delete fetching[file]; });
    }
    return fetching[file];
  }
  // The window asked for a lesson it does not have (app_fetch_lesson): a shipped one is fetched,
  // then opened, unless another was asked for meanwhile (the last asked for opens); or the
  // window says why not, the lesson on screen kept. false: not a shipped lesson.
  let wanted = null;
  function fetchForWindow(path) {
    const parts = [];
    for (const p of path.split('/')) { if (p === '..') parts.pop(); else if (p !== '.' && p !== '') parts.push(p); }
    const folded = '/' + parts.join('/'), file = folded.slice(SHIPPED.length);
    if (!folded.startsWith(SHIPPED) || file.includes('/') || !manifest()[file]) return null;
    wanted = path;
    return shippedFile(file).then(() => {
      if (wanted !== path) return 0;
      wanted = null;
      return window.attnviz.open(path);
    }, (e) => {
      if (wanted === path) {
        wanted = null;
        withString(path, (p) => withString(e.message, (m) => Module._attnviz_lesson_failed(p, e.status || 0, m)));
      }
      throw e;
    });
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
  // E's GIF, MP4 or PDF frames: the folder holds the one file and frames.json; the file is
  // the download, named after the folder (attnviz-export-NAME-N.gif, the desktop's
  // attnviz-export-NAME-N/frames.gif)
  const ONE_FILE = {'frames.gif': 'image/gif', 'frames.mp4': 'video/mp4', 'frames.pdf': 'application/pdf'};
  function saved(path) {
    if (path.startsWith('./')) path = WORK + path.slice(1); // (S and E write in the working folder)
    // (an MP4 is written once the browser's encoder has flushed: web_export.js)
    const wait = window.attnvizExport ? attnvizExport.pending(path) : Promise.resolve();
    wait.then(() => deliver(path), () => removeTree(path));
  }
  function removeTree(path) {
    const FS = Module.FS;
    try {
      if (FS.isDir(FS.stat(path).mode)) {
        for (const n of FS.readdir(path)) if (n !== '.' && n !== '..') FS.unlink(path + '/' + n);
        FS.rmdir(path);
      }
    } catch (e) { /* gone already */ }
  }
  function deliver(path) {
    const FS = Module.FS, base = path.split('/').pop();
    try {
      const st = FS.stat(path);
      const one = FS.isDir(st.mode) && FS.readdir(path).find((n) => ONE_FILE[n]);
      if (one) {
        download(base + one.slice(6), FS.readFile(path + '/' + one), ONE_FILE[one]);
        removeTree(path);
      } else if (FS.isDir(st.mode)) {
        const files = FS.readdir(path).filter((n) => n !== '.' && n !== '..')
          .map((n) => ({name: base + '/' + n, data: FS.readFile(path + '/' + n)}));
        download(base + '.zip', zip(files), 'application/zip');
        removeTree(path);
      } else {
        const type = base.endsWith('.png') ? 'image/png' : base.endsWith('.json') ? 'application/json'
          : base.endsWith('.pdf') ? 'application/pdf' : 'application/octet-stream'; // (the handout, the worksheet)
        download(base, FS.readFile(path), type);
        if (path.startsWith(WORK + '/')) FS.unlink(path); // (a saved lesson stays: the picker lists it)
      }
    } catch (e) {
      console.error('attnviz: ' + path + ': ' + e);
    }
    sync();
  }

  // A lesson file dropped on the page opens like one dropped on the desktop window. Its
  // copy, /tmp/drop-HASH/NAME (HASH: 64 bits of its content, crc32 and FNV-1a: a dropped
  // file has no address, so its study progress is keyed by what it holds), stays only
  // while it is the lesson on screen (the text box, the checkpoints and E read the
  // file again); every other copy is removed.
  function contentHash(b) {
    let h = 0x811C9DC5;
    for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 0x01000193);
    const hex = (x) => (x >>> 0).toString(16).padStart(8, '0');
    return hex(crc32(b)) + hex(h);
  }
  function removeDrops() {
    const FS = Module.FS, s = Module._attnviz_state && window.attnviz.state();
    const keep = s ? s.lesson : '';
    for (const n of FS.readdir('/tmp')) {
      const dir = '/tmp/' + n;
      if (!/^drop-[0-9a-f]{16}$/.test(n) || keep.startsWith(dir + '/')) continue;
      for (const f of FS.readdir(dir)) if (f !== '.' && f !== '..') FS.unlink(dir + '/' + f);
      FS.rmdir(dir);
    }
  }
  document.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
  document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
  document.addEventListener('drop', async (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    const file = e.dataTransfer && e.dataTransfer.files[0];
    if (!file || !Module._attnviz_state || !window.attnviz.state()) return;
    const bytes = new Uint8Array(await file.arrayBuffer()), dir = '/tmp/drop-' + contentHash(bytes);
    Module.FS.mkdirTree(dir);
    const path = dir + '/' + (file.name.replace(/[\/\0]/g, '_') || 'lesson.json');
    Module.FS.writeFile(path, bytes);
    window.attnviz.open(path);
    removeDrops();
    canvas.focus();
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

  // The page's own words (the window's are in assets/lang/*.txt).
  const WORDS = {
    en: {
      title: 'This link did not open a lesson',
      stage: (s, t) => `This link asks for the step “${s}”, but the lesson “${t}” has no step by that name.`,
      slice: (t) => `This link asks for an example (batch) or a head that the lesson “${t}” does not have.`,
      noLesson: (n) => `There is no lesson called “${n}”. Perhaps the link was mistyped.`,
      missing: (p) => `The lesson file “${p}” is not on this site. Perhaps the link was mistyped.`,
      away: 'A link can only open a lesson file from this site, and this one is on another site.',
      redirect: 'The lesson file’s address leads to another site, so it was not opened: a link can only open a lesson from this site.',
      fetch: (p) => `The lesson file “${p}” could not be downloaded. Check your connection and try again.`,
      unreadable: (p) => `The lesson file “${p}” is not a lesson attnviz can read.`,
      address: 'Part of this link is mistyped: attnviz cannot read it.',
      other: 'attnviz could not start with this link.',
      details: 'Details (for your teacher):',
      first: 'Open the first lesson',
      list: 'Or choose a lesson:',
      closed: 'attnviz has closed.',
      again: 'Start again where you were',
      skip: 'Skip to the lesson as text and tables',
      canvas: 'attnviz: the lesson’s picture, stage by stage',
      keys: 'Keys on the picture: → next stage, ← previous stage, Y cell cursor (arrows move it, each cell is read out with how it was computed), Tab next head, ? all keys. Shift+Tab leaves the picture; Esc in this text goes back to it.',
      controls: 'Controls',
      formula: 'Formula', alt: 'What the picture shows', cell: 'Cell', tables: 'Tables', back: 'Back to the picture',
      noCell: 'No cell chosen: press Y on the picture (or the button above) for the cell cursor.',
      row: 'row', col: 'column', of: (n, m) => `first ${n} of ${m}`, hidden: 'hidden until you answer',
      buttons: [['Previous stage', 'Left'], ['Next stage', 'Right'], ['Play / pause', 'P'], ['Previous head', '['],
                ['Next head', ']'], ['Cell cursor on / off', 'Y'], ['Numbers on / off', 'V'], ['中文', 'L'],
                ['Study mode', 'T'], ['Projector mode', 'M'], ['Backward view on / off', 'B', 2],
                ['Train live / pause', 'R'], ['Compare: the next head zeroed', 'D', 2],
                ['Compare: the previous head zeroed', 'D', 3], ['All keys', '?'], ['Presenter window', 'F5']],
    },
    zh: {
      title: '这个链接没有打开课程',
      stage: (s, t) => `这个链接要打开步骤“${s}”，但课程“${t}”中没有这个步骤。`,
      slice: (t) => `这个链接要打开的样本（batch）或注意力头，课程“${t}”中没有。`,
      noLesson: (n) => `没有名为“${n}”的课程。链接可能输错了。`,
      missing: (p) => `本站没有课程文件“${p}”。链接可能输错了。`,
      away: '链接只能打开本站的课程文件，而这个文件在其他网站上。',
      redirect: '这个课程文件的地址会转到其他网站，因此没有打开：链接只能打开本站的课程。',
      fetch: (p) => `无法下载课程文件“${p}”。请检查网络后重试。`,
      unreadable: (p) => `课程文件“${p}”不是 attnviz 能读取的课程。`,
      address: '这个链接有一部分输错了，attnviz 无法读取。',
      other: 'attnviz 无法用这个链接启动。',
      details: '详细信息（供老师参考）：',
      first: '打开第一课',
      list: '或者选择一课：',
      closed: 'attnviz 已关闭。',
      again: '回到刚才的位置重新开始',
      skip: '跳到课程的文字和表格',
      canvas: 'attnviz：课程画面，逐步展示',
      keys: '画面上的按键：→ 下一步，← 上一步，Y 单元格光标（方向键移动，读出每格的值和计算过程），Tab 下一个头，? 全部按键。Shift+Tab 离开画面；在本文字区按 Esc 回到画面。',
      controls: '控制',
      formula: '公式', alt: '画面内容', cell: '单元格', tables: '表格', back: '回到画面',
      noCell: '尚未选择单元格：在画面上按 Y（或上面的按钮）打开单元格光标。',
      row: '行', col: '列', of: (n, m) => `共 ${m}，显示前 ${n}`, hidden: '回答后显示',
      buttons: [['上一步', 'Left'], ['下一步', 'Right'], ['播放 / 暂停', 'P'], ['上一个头', '['], ['下一个头', ']'],
                ['单元格光标 开 / 关', 'Y'], ['数字 显示 / 隐藏', 'V'], ['English', 'L'], ['学习模式', 'T'],
                ['投影模式', 'M'], ['反向视图 开 / 关', 'B', 2], ['现场训练 / 暂停', 'R'],
                ['对比：下一个头置零', 'D', 2], ['对比：上一个头置零', 'D', 3], ['全部按键', '?'], ['演讲者窗口', 'F5']],
    },
  };
  const words = () => WORDS[lang()];

  const titleIn = (t) => { const v = typeof t === 'string' ? t : t && (t[lang()] || t.en); return typeof v === 'string' && v ? v : null; };
  // A lesson file's title in the page's language (the manifest's for a lesson not fetched; its
  // name when it has none).
  function lessonTitle(path) {
    try {
      const v = titleIn(JSON.parse(new TextDecoder().decode(Module.FS.readFile(path))).title);
      if (v) return v;
    } catch (e) { /* (the manifest's, or its name, then) */ }
    const m = path.startsWith(SHIPPED) && manifest()[path.slice(SHIPPED.length)];
    return (m && titleIn(m.title)) || path.split('/').pop();
  }
  // The shipped lessons (the manifest's), the first lesson first: [{name, title}].
  function shippedLessons() {
    const names = Object.keys(manifest()).map((n) => n.slice(0, -5)).sort();
    const first = 'arange-2x4x4';
    names.sort((a, b) => (b === first) - (a === first));
    return names.map((name) => ({name, title: lessonTitle(SHIPPED + name + '.json')}));
  }
  function link(query, text) {
    const a = document.createElement('a');
    a.href = '?' + query;
    a.textContent = text;
    return a;
  }
  // Why the link did not open, in a student's words: the program's line (why) read.
  function explain(why, kind) {
    const w = words(), v = plan ? plan.lesson : '';
    let m;
    if (kind && w[kind]) return typeof w[kind] === 'function' ? w[kind](v) : w[kind];
    if ((m = /--stage: (.+) has no stage "(.*)" \(/.exec(why))) return w.stage(m[2], lessonTitle(m[1]));
    if ((m = /--batch\/--head: (.+) has batches/.exec(why))) return w.slice(lessonTitle(m[1]));
    if (plan && plan.lesson && !plan.fetch && why.includes(SHIPPED + plan.lesson + '.json'))
      return /No such file|cannot open/.test(why) ? w.noLesson(plan.lesson) : w.unreadable(plan.lesson);
    if (plan && plan.fetch && /^attnviz: \//.test(why)) return w.unreadable(v);
    if (/^attnviz: (--|the address)/.test(why)) return w.address;
    return w.other;
  }
  // The page instead of the canvas: why (plain words, then the program's line) and where to go.
  function showProblem(why, kind) {
    const w = words(), l = 'lang=' + lang();
    document.documentElement.lang = lang() === 'zh' ? 'zh-CN' : 'en';
    statusText.textContent = '';
    const box = document.createElement('div');
    box.className = 'problem';
    const h = document.createElement('h1');
    h.textContent = w.title;
    const p = document.createElement('p');
    p.className = 'why';
    p.textContent = explain(why, kind);
    const first = link(l, w.first);
    first.className = 'first';
    const d = document.createElement('p');
    d.className = 'details';
    d.textContent = w.details;
    const pre = document.createElement('pre');
    pre.textContent = why;
    const lp = document.createElement('p');
    lp.textContent = w.list;
    const ul = document.createElement('ul');
    ul.className = 'lessons';
    for (const x of shippedLessons()) {
      const li = document.createElement('li');
      li.append(link('lesson=' + x.name + '&' + l, x.title));
      ul.append(li);
    }
    box.append(h, p, first, lp, ul, d, pre);
    statusText.append(box);
    statusBox.hidden = false;
    statusBox.classList.add('scroll');
    canvas.hidden = true;
  }

  // ---- the accessible layer (see the top) ------------------------------------------------
  // The formula as MathML: names (with _sub and ᵀ), numbers, √ of the next term, operators.
  const MATH = 'http://www.w3.org/1998/Math/MathML';
  function mathEl(tag, text) {
    const e = document.createElementNS(MATH, tag);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function toMathML(text) {
    const math = mathEl('math'), row = mathEl('mrow');
    math.setAttribute('display', 'block');
    const re = /\s+|((?!ᵀ)\p{L}(?:(?!ᵀ)[\p{L}\p{N}])*(?:_[\p{L}\p{N}]+)?)(ᵀ?)|([0-9]+(?:\.[0-9]+)?(?:e[−-]?[0-9]+)?)|(√)|(.)/uy;
    let m, root = false;
    const put = (e) => {
      if (root) { const r = mathEl('msqrt'); r.append(e); e = r; root = false; }
      row.append(e);
    };
    while (re.lastIndex < text.length && (m = re.exec(text))) {
      if (m[1]) {
        const [base, sub] = m[1].split('_');
        let e = mathEl('mi', base);
        if (sub !== undefined) { const s = mathEl('msub'); s.append(e, mathEl('mi', sub)); e = s; }
        if (m[2]) { const s = mathEl('msup'); s.append(e, mathEl('mi', 'T')); e = s; }
        put(e);
      } else if (m[3]) put(mathEl('mn', m[3]));
      else if (m[4]) root = true;
      else if (m[5]) put(mathEl('mo', m[5]));
    }
    math.append(row);
    return math;
  }
  function buildControls() {
    const box = document.getElementById('a11y-controls');
    box.textContent = '';
    box.setAttribute('aria-label', words().controls);
    for (const [label, key, mods] of words().buttons) { // (mods: 1 Shift, 2 Ctrl, 3 both)
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = label;
      b.addEventListener('click', () => { window.attnviz.key(key, mods || 0); });
      box.append(b);
    }
  }
  function buildTable(p) {
    const w = words(), t = document.createElement('table'), cap = document.createElement('caption');
    const rows = p.cells.length, cols = rows ? p.cells[0].length : 0;
    let c = `${p.title} (${p.shape[0]}×${p.shape[1]})`;
    if (p.hidden) c += ', ' + w.hidden;
    if (rows < p.shape[0] || cols < p.shape[1]) c += ', ' + w.of(`${rows}×${cols}`, `${p.shape[0]}×${p.shape[1]}`);
    cap.textContent = c;
    const head = document.createElement('tr'), corner = document.createElement('td');
    head.append(corner);
    for (const label of p.cols) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = label;
      head.append(th);
    }
    const thead = document.createElement('thead'), tbody = document.createElement('tbody');
    thead.append(head);
    p.cells.forEach((line, r) => {
      const tr = document.createElement('tr'), th = document.createElement('th');
      th.scope = 'row';
      th.textContent = p.rows[r];
      tr.append(th);
      for (const v of line) { const td = document.createElement('td'); td.textContent = v; tr.append(td); }
      tbody.append(tr);
    });
    t.append(cap, thead, tbody);
    return t;
  }
  let shown = {live: null, tables: null, cell: null, lang: null, at: null};
  function cellText(pt) {
    const w = words();
    if (!pt) return w.noCell;
    return `${pt.title}, ${w.row} ${pt.row_label}, ${w.col} ${pt.col_label}: ${pt.value}` + (pt.derivation ? '\n' + pt.derivation : '');
  }
  function updateLayer() {
    if (!Module._attnviz_a11y) return;
    const d = JSON.parse(cString(Module._attnviz_a11y()) || 'null');
    if (!d) return;
    const w = WORDS[d.lang] || WORDS.en;
    if (d.lang !== shown.lang) { // the language: the page's words and lang follow the window's
      if (plan) plan.lang = d.lang;
      document.documentElement.lang = d.lang === 'zh' ? 'zh-CN' : 'en';
      document.getElementById('skip').textContent = w.skip;
      canvas.setAttribute('aria-label', w.canvas);
      document.getElementById('canvas-keys').textContent = w.keys;
      document.getElementById('a11y-formula-title').textContent = w.formula;
      document.getElementById('a11y-alt-title').textContent = w.alt;
      document.getElementById('a11y-cell-title').textContent = w.cell;
      document.getElementById('a11y-tables-title').textContent = w.tables;
      document.getElementById('a11y-back').textContent = w.back;
      buildControls();
      shown.lang = d.lang;
      shown.tables = null;
    }
    const live = [d.title, d.formula, d.narration, d.question].filter((x) => x).join('\n');
    if (live !== shown.live) {
      document.getElementById('a11y-title').textContent = d.title;
      document.getElementById('a11y-live').textContent = live; // (spoken: a live region)
      const f = document.getElementById('a11y-formula');
      f.textContent = '';
      const p = document.createElement('p');
      p.textContent = d.formula + (d.note ? '   ' + d.note : '');
      f.append(toMathML(d.formula), p);
      shown.live = live;
    }
    document.getElementById('a11y-alt').textContent = d.alt;
    const toast = document.getElementById('a11y-toast'); // the window's notice (a status: spoken)
    if (toast.textContent !== d.toast) toast.textContent = d.toast;
    const tables = JSON.stringify(d.panels);
    if (tables !== shown.tables) {
      const box = document.getElementById('a11y-tables');
      box.textContent = '';
      for (const p of d.panels) box.append(buildTable(p));
      shown.tables = tables;
      shown.at = null;
    }
    const cell = cellText(d.pointed);
    if (cell !== shown.cell) {
      document.getElementById('a11y-cell').textContent = cell; // (spoken: a live region)
      shown.cell = cell;
    }
    const at = d.pointed ? [d.pointed.panel, d.pointed.row, d.pointed.col].join() : null;
    if (at !== shown.at) { // the cursor's cell marked in its table too
      for (const td of document.querySelectorAll('#a11y td.at')) td.classList.remove('at');
      const t = d.pointed && document.querySelectorAll('#a11y-tables table')[d.pointed.panel];
      const td = t && t.tBodies[0].rows[d.pointed.row] && t.tBodies[0].rows[d.pointed.row].cells[d.pointed.col + 1];
      if (td) td.classList.add('at');
      shown.at = at;
    }
  }
  let layerQueued = false;
  function queueLayer() { // after a drawn frame, at most every 150 ms (a transition draws many)
    if (layerQueued) return;
    layerQueued = true;
    setTimeout(() => {
      layerQueued = false;
      updateLayer();
      if (window.attnvizPresent) attnvizPresent.changed(); // (the presenter window follows: web_present.js)
      if (window.attnvizType) attnvizType.changed(); // (the field for a phone's keyboard: web_type.js)
    }, 150);
  }
  // Shift+Tab on the canvas leaves it, whatever mode the window is in (the lab's field,
  // the study box, the text box): the window never sees it. Esc in the layer: back.
  window.addEventListener('keydown', (e) => {
    if (e.target === canvas && e.key === 'Tab' && e.shiftKey) e.stopImmediatePropagation();
    else if (e.key === 'Escape' && layer.contains(e.target)) { e.preventDefault(); canvas.focus(); }
  }, true);
  document.getElementById('skip').addEventListener('click', (e) => {
    e.preventDefault();
    updateLayer();
    document.getElementById('a11y-title').focus();
  });
  document.getElementById('a11y-back').addEventListener('click', (e) => { e.preventDefault(); canvas.focus(); });
  const reducedMotion = window.matchMedia ? window.matchMedia('(prefers-reduced-motion: reduce)') : null;
  function followMotion() {
    if (Module._attnviz_reduced_motion) Module._attnviz_reduced_motion(reducedMotion && reducedMotion.matches ? 1 : 0);
  }
  if (reducedMotion) reducedMotion.addEventListener('change', followMotion);

  // What web_main.c calls.
  window.attnvizPage = {
    saved,
    drawn: queueLayer,
    fetchFont() {
      if (fontState === 'loading') return 1;
      if (fontState === 'failed') return 0;
      loadCjk().then((ok) => { if (ok && Module._attnviz_font_arrived) Module._attnviz_font_arrived(); });
      return 1;
    },
    fetchLesson(path) {
      const p = fetchForWindow(path);
      if (!p) return 0;
      p.catch(() => {}); // (the window says why)
      return 1;
    },
    closed(here) { // (nothing in the page ends the session; should the window end, back to where it was)
      statusText.textContent = '';
      const p = document.createElement('p');
      p.textContent = words().closed;
      const b = document.createElement('button');
      b.textContent = words().again;
      b.onclick = () => { location.search = '?' + here; };
      statusText.append(p, b);
      statusBox.hidden = false;
      canvas.hidden = true;
      sync();
    },
    failed(kind) {
      const why = errors.join('\n') || 'attnviz could not start.';
      showProblem(why, kind);
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
    benchForward: (json, n) => withString(json, (p) => cString(Module._attnviz_bench_forward(p, n))),
    heapUsed: () => Module._attnviz_heap_used(),
    textCacheBytes: () => Module._attnviz_text_cache_bytes(),
    open: (path) => withString(path, (p) => Module._attnviz_open(p)),
    lesson: (name) => fetchForWindow(SHIPPED + name + '.json') || Promise.reject(new Error(name + ': no such shipped lesson')),
    here: () => cString(Module._attnviz_here()),
    a11y: () => JSON.parse(cString(Module._attnviz_a11y()) || 'null'),
    key: (name, mods) => withString(name, (p) => Module._attnviz_key(p, typeof mods === 'number' ? mods : mods ? 1 : 0)),
    train: (steps) => Module._attnviz_train(steps),
    compare: (data) => cString(Module._attnviz_compare(data ? 1 : 0)),
    sync,
  };

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
      plan = JSON.parse(withString(location.search, (q) => withString(navigator.language || '', (n) => cString(Module._attnviz_url(q, n)))));
      if (plan.error) {
        errors.push('attnviz: ' + plan.error);
        window.attnvizPage.failed('address');
        return;
      }
      const args = [...plan.args];
      try {
        // whether the browser encodes H.264 (E lists MP4 only then): a few ms, 3 s at most
        await Promise.race([attnvizExport.probe, new Promise((r) => setTimeout(r, 3000))]);
        if (lang() === 'zh') await loadCjk();
        if (plan.fetch) args.push('--', await fetchLesson(plan.lesson));
        else if (plan.lesson) await shippedFile(plan.lesson + '.json'); // (not in the manifest: the window says so)
      } catch (e) {
        errors.push('attnviz: ' + e.message);
        window.attnvizPage.failed(e.kind);
        return;
      }
      const [w0, h0] = deviceSize(); // (the page's size now: it may have changed while loading)
      Module.callMain(['--size', w0 + 'x' + h0, ...args]); // (SDL sizes the canvas in device pixels; its
      windowOpen = true;                                    // CSS size only after, or SDL would take
      fitCanvas();                                          // the CSS size for the window's)
      if (deviceSize().join('x') !== w0 + 'x' + h0) window.dispatchEvent(new Event('resize')); // (changed meanwhile)
      if (!window.attnviz.state()) return; // (failed() showed why)
      statusBox.hidden = true;
      layer.hidden = false;
      followMotion();
      updateLayer();
      canvas.focus();
      const wait = () => {
        const s = window.attnviz.state();
        if (s && s.frames > 0) readyResolve(s); else requestAnimationFrame(wait);
      };
      wait();
      setInterval(sync, 3000); // progress.json after an answer, a saved lesson
      setInterval(() => { // the address bar where the window is; a dropped copy no longer on screen removed
        const here = window.attnviz.here();
        if (here !== null && '?' + here !== location.search) history.replaceState(null, '', '?' + here);
        removeDrops();
      }, 1000);
      document.addEventListener('visibilitychange', () => { if (document.hidden) sync(); });
    },
  };
})();
