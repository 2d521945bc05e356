// web_export.js — E's MP4 in the page (web_video.c calls it): the browser's H.264 encoder
// (WebCodecs' VideoEncoder) and an MP4 muxer written here from ISO/IEC 14496-12 and -15.
//
// Why WebCodecs: the desktop's libx264 + libavformat built for WebAssembly would add
// megabytes to the page for an export few visits make; every Chromium since 94 (Debian's
// included, headless too) and Safari 16.4 encode H.264 themselves; Firefox encodes it
// from 130. VP9 or AV1 would need WebM, and the desktop's MP4 (what PowerPoint, Keynote
// and Google Slides play) is H.264. Where the browser has no H.264 encoder (the probe below,
// awaited by web.js before the window opens: mp4Supported()), E and the help leave MP4 out
// and say why, and 3 says so instead of starting (web_video.c's video_available).
//
// The file is the desktop's in form: one H.264 track, a frame a drawn frame lasting its
// ticks of 1/fps (a held stage is one frame that lasts), a key frame at least every 2 s,
// the last held frame repeated at its last tick (players that ignore a last frame's
// length still show the whole hold), the index (moov) before the data (plays while it
// downloads). Frames are encoded as they are drawn; the file is written to the page's
// file system once the encoder has flushed, after the C side has closed it: web.js's
// download waits for it (attnvizExport.pending).
'use strict';
(function () {
  const encoders = new Map(); // id → {path, w, h, fps, enc, chunks, ticks, error, done}
  let nextId = 1, openError = '';
  // H.264 High (then Main, then Constrained Baseline), level 5.1: up to 4096×2304 (36,864
  // macroblocks), more than any canvas the window exports at
  const CODECS = ['avc1.640033', 'avc1.4d0033', 'avc1.42e033'];
  let codec = null; // the first the browser encodes, once known (isConfigSupported is asynchronous)
  const probe = typeof VideoEncoder === 'undefined' ? Promise.resolve(null) : (async () => {
    for (const c of CODECS) {
      try {
        const s = await VideoEncoder.isConfigSupported({codec: c, width: 1280, height: 720, bitrate: 4e6, framerate: 30});
        if (s.supported) return (codec = c);
      } catch (e) { /* next */ }
    }
    return null;
  })();

  function mp4Open(path, w, h, fps) {
    if (typeof VideoEncoder === 'undefined') {
      openError = 'this browser cannot encode video (no WebCodecs VideoEncoder): export GIF (4) or use the desktop app';
      return 0;
    }
    if (!codec) {
      openError = 'this browser has no H.264 encoder for an MP4: export GIF (4) or use the desktop app';
      return 0;
    }
    if (!path.startsWith('/')) path = Module.FS.cwd().replace(/\/$/, '') + '/' + path.replace(/^\.\//, '');
    const id = nextId++;
    const e = {path, w, h, fps, chunks: [], ticks: [], sent: 0, lastKey: -Infinity, error: '', done: null, config: null};
    try {
      e.enc = new VideoEncoder({
        output: (chunk, meta) => {
          if (meta && meta.decoderConfig && meta.decoderConfig.description && !e.config)
            e.config = new Uint8Array(meta.decoderConfig.description.slice ? meta.decoderConfig.description.slice(0)
                                                                             : meta.decoderConfig.description);
          const data = new Uint8Array(chunk.byteLength);
          chunk.copyTo(data);
          e.chunks.push({data, key: chunk.type === 'key', ts: chunk.timestamp});
        },
        error: (err) => { if (!e.error) e.error = 'the browser\'s H.264 encoder failed: ' + err.message; },
      });
      e.enc.configure({codec, width: w, height: h, framerate: fps, avc: {format: 'avc'}, latencyMode: 'quality',
                       bitrate: Math.max(2e6, Math.round(w * h * fps * 0.15))});
    } catch (err) {
      openError = 'the browser\'s H.264 encoder would not start (' + err.message + ')';
      return 0;
    }
    encoders.set(id, e);
    return id;
  }

  // One frame (h rows of w RGBA, pitch bytes apart, in the wasm heap) lasting ticks.
  function mp4Frame(id, heap, ptr, pitch, ticks) {
    const e = encoders.get(id);
    if (!e || e.error) return 0;
    try {
      let rgba = heap.subarray(ptr, ptr + pitch * e.h);
      if (pitch !== e.w * 4) { // (rows packed for the VideoFrame)
        const packed = new Uint8Array(e.w * 4 * e.h);
        for (let y = 0; y < e.h; y++) packed.set(heap.subarray(ptr + y * pitch, ptr + y * pitch + e.w * 4), y * e.w * 4);
        rgba = packed;
      }
      send(e, rgba, ticks);
    } catch (err) {
      e.error = 'could not encode a frame (' + err.message + ')';
      return 0;
    }
    return 1;
  }
  function send(e, rgba, ticks) {
    const ts = Math.round(e.sent * 1e6 / e.fps);
    const frame = new VideoFrame(rgba, {format: 'RGBA', codedWidth: e.w, codedHeight: e.h, timestamp: ts,
                                        duration: Math.round(ticks * 1e6 / e.fps)});
    const key = e.sent - e.lastKey >= 2 * e.fps; // a key frame every 2 s: slides can seek
    if (key) e.lastKey = e.sent;
    e.enc.encode(frame, {keyFrame: key});
    frame.close();
    e.ticks.push(ticks);
    e.last = {rgba, ticks};
    e.sent += ticks;
  }

  function mp4Close(id, keep) {
    const e = encoders.get(id);
    if (!e) return 0;
    if (!keep || e.error) {
      encoders.delete(id);
      try { e.enc.close(); } catch (err) { /* closed already */ }
      return e.error && keep ? 0 : 1;
    }
    if (e.last && e.last.ticks > 1) { // the last hold: its last tick again
      e.ticks[e.ticks.length - 1]--;
      e.sent--;
      send(e, e.last.rgba, 1);
    }
    e.last = null;
    e.done = e.enc.flush().then(() => {
      e.enc.close();
      if (e.error) throw new Error(e.error);
      if (e.chunks.length !== e.ticks.length) throw new Error(`the encoder gave ${e.chunks.length} frames for ${e.ticks.length}`);
      if (!e.config) throw new Error('the encoder gave no H.264 configuration');
      Module.FS.writeFile(e.path, mux(e));
    }).catch((err) => {
      const why = e.path + ': ' + (err.message || err);
      console.error('attnviz: ' + why);
      if (Module._attnviz_export_failed) {
        const n = why.length * 4 + 1, p = Module._malloc(n);
        Module.stringToUTF8(why, p, n);
        Module._attnviz_export_failed(p);
        Module._free(p);
      }
      throw err;
    }).finally(() => encoders.delete(id));
    pendingFiles.push(e);
    return 1;
  }
  const pendingFiles = [];

  // ---- the MP4 ----------------------------------------------------------------------
  const enc = new TextEncoder();
  function u32(n) { return [n >>> 24 & 255, n >>> 16 & 255, n >>> 8 & 255, n & 255]; }
  function u16(n) { return [n >>> 8 & 255, n & 255]; }
  function box(type, ...parts) {
    const body = parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p)));
    const size = 8 + body.reduce((s, p) => s + p.length, 0);
    const out = new Uint8Array(size);
    out.set(u32(size), 0);
    out.set(enc.encode(type), 4);
    let at = 8;
    for (const p of body) { out.set(p, at); at += p.length; }
    return out;
  }
  const full = (type, version, flags, ...parts) => box(type, [version, ...u32(flags).slice(1)], ...parts);
  const MATRIX = [...u32(0x10000), ...u32(0), ...u32(0), ...u32(0), ...u32(0x10000), ...u32(0), ...u32(0), ...u32(0),
                  ...u32(0x40000000)];
  function moov(e, dataAt) {
    const n = e.chunks.length, total = e.ticks.reduce((s, t) => s + t, 0), T = e.fps;
    const stts = [];
    for (const t of e.ticks) {
      if (stts.length && stts[stts.length - 1][1] === t) stts[stts.length - 1][0]++;
      else stts.push([1, t]);
    }
    const keys = [];
    e.chunks.forEach((c, i) => { if (c.key) keys.push(i + 1); });
    const avc1 = box('avc1', [0, 0, 0, 0, 0, 0, ...u16(1), ...u16(0), ...u16(0), ...u32(0), ...u32(0), ...u32(0),
                              ...u16(e.w), ...u16(e.h), ...u32(0x480000), ...u32(0x480000), ...u32(0), ...u16(1),
                              ...new Array(32).fill(0), ...u16(0x18), ...u16(0xffff)], box('avcC', e.config));
    const stbl = box('stbl',
      full('stsd', 0, 0, u32(1), avc1),
      full('stts', 0, 0, u32(stts.length), stts.flatMap(([c, d]) => [...u32(c), ...u32(d)])),
      full('stss', 0, 0, u32(keys.length), keys.flatMap(u32)),
      full('stsc', 0, 0, u32(1), [...u32(1), ...u32(n), ...u32(1)]),
      full('stsz', 0, 0, u32(0), u32(n), e.chunks.flatMap((c) => u32(c.data.length))),
      full('stco', 0, 0, u32(1), u32(dataAt)));
    const minf = box('minf', full('vmhd', 0, 1, new Array(8).fill(0)),
                     box('dinf', full('dref', 0, 0, u32(1), full('url ', 0, 1))), stbl);
    const mdia = box('mdia', full('mdhd', 0, 0, u32(0), u32(0), u32(T), u32(total), u16(0x55c4), u16(0)),
                     full('hdlr', 0, 0, u32(0), enc.encode('vide'), new Array(12).fill(0), enc.encode('VideoHandler\0')), minf);
    const tkhd = full('tkhd', 0, 3, u32(0), u32(0), u32(1), u32(0), u32(total), new Array(8).fill(0), u16(0), u16(0),
                      u16(0), u16(0), MATRIX, u32(e.w * 65536), u32(e.h * 65536));
    const mvhd = full('mvhd', 0, 0, u32(0), u32(0), u32(T), u32(total), u32(0x10000), u16(0x100), new Array(10).fill(0),
                      MATRIX, new Array(24).fill(0), u32(2));
    return box('moov', mvhd, box('trak', tkhd, mdia));
  }
  function mux(e) {
    const ftyp = box('ftyp', enc.encode('isom'), u32(512), enc.encode('isomiso2avc1mp41'));
    const size = e.chunks.reduce((s, c) => s + c.data.length, 0);
    const head = moov(e, 0).length; // (its size does not depend on the offset)
    const index = moov(e, ftyp.length + head + 8);
    const out = new Uint8Array(ftyp.length + index.length + 8 + size);
    out.set(ftyp, 0);
    out.set(index, ftyp.length);
    let at = ftyp.length + index.length;
    out.set(u32(8 + size), at);
    out.set(enc.encode('mdat'), at + 4);
    at += 8;
    for (const c of e.chunks) { out.set(c.data, at); at += c.data.length; }
    return out;
  }

  window.attnvizExport = {
    probe, mp4Open, mp4Frame, mp4Close,
    mp4Supported: () => codec !== null, // (once probe has settled: web.js waits for it before the window opens)
    mp4Error: (id) => (encoders.get(id) || {}).error || openError || 'the browser\'s video encoder failed',
    // A Promise: the MP4s being written into the folder (or file) at path are written.
    pending(path) {
      const here = pendingFiles.filter((e) => e.path === path || e.path.startsWith(path + '/'));
      for (const e of here) pendingFiles.splice(pendingFiles.indexOf(e), 1);
      return Promise.all(here.map((e) => e.done));
    },
  };
})();
