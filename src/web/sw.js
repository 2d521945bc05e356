// sw.js — the service worker: the site kept in the browser's cache so that after the first
// visit it opens with the network off, the teacher's links (?lesson=…&stage=…) included.
// make web writes build/web/sw.js from this file with VERSION, a hash of the site's files:
// a new build is a new worker, which caches the whole new site first and only then, once
// it takes over, deletes every older attnviz cache (a failed download keeps the old one;
// the Chinese font, fetched on demand, moves over, and so does each lesson kept whose bytes the
// new version still ships).
// Lessons (issue 39): none is precached. attnviz.data holds the default one; any other is
// fetched the first time it is opened (web.js: lessons/NAME.json?v=SHA, SHA from the lessons'
// manifest) and kept then. Precaching the others would make every first visit download them
// all again in the background (a trained language model's lesson is megabytes), which is
// what fetching them on demand avoids; a class that will be offline opens its lessons once.
//   the site's files (below)      from the cache (they change only with a new version)
//   a lesson (LESSONS, below)     from the cache once kept (its address names its bytes), else
//                                 the network, a copy kept
//   a page address (index.html?…) the cached index.html: the page reads its query itself
//   anything else on this site     (a lesson=path/x.json file, the Chinese font fetched on
//                                  demand): the network, a copy kept; offline, the copy
'use strict';
const VERSION = '@VERSION@';
const CACHE = 'attnviz-' + VERSION;
const FILES = [@FILES@];
const LESSONS = [@LESSONS@];

// 'no-cache': each file is revalidated with the site (a new version's files are never taken
// from a stale HTTP cache), and what the page itself just downloaded comes back as
// "304 Not Modified" from a host that sends Last-Modified or ETag (every static host does),
// so the first visit does not download the site twice ('reload' did: 5.08 MB against 2.5).
self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE)
    .then((c) => c.addAll(FILES.map((f) => new Request(f, {cache: 'no-cache'}))))
    .then(() => self.skipWaiting()));
});

// The Chinese font is no file of a version (it is not in the hash): an older cache's copy
// moves to the new one, so Chinese seen once stays offline across new builds. A lesson kept
// moves too when the new version ships the same bytes (its address, with ?v=SHA, is one of
// LESSONS); a changed lesson is fetched again.
const FONT = 'fonts/wqy-microhei.ttc';
const scoped = (url) => {
  const u = new URL(url), scope = new URL(self.registration.scope);
  return u.pathname.startsWith(scope.pathname) ? u.pathname.slice(scope.pathname.length) + u.search : null;
};
async function takeOver() {
  const old = (await caches.keys()).filter((k) => k.startsWith('attnviz-') && k !== CACHE), cache = await caches.open(CACHE);
  for (const k of old) {
    const from = await caches.open(k), font = await from.match(FONT);
    if (font && !(await cache.match(FONT))) await cache.put(FONT, font);
    for (const request of await from.keys()) {
      if (!LESSONS.includes(scoped(request.url)) || (await cache.match(request))) continue;
      const copy = await from.match(request);
      if (copy) await cache.put(request, copy);
    }
  }
  await Promise.all(old.map((k) => caches.delete(k)));
  await self.clients.claim();
}
self.addEventListener('activate', (event) => event.waitUntil(takeOver()));

async function fromNetwork(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok && response.type === 'basic') await cache.put(request, response.clone());
    return response;
  } catch (e) {
    const copy = await cache.match(request);
    if (copy) return copy;
    throw e;
  }
}

self.addEventListener('fetch', (event) => {
  const request = event.request, url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  const scope = new URL(self.registration.scope);
  const name = url.pathname.startsWith(scope.pathname) ? url.pathname.slice(scope.pathname.length) : null;
  if (request.mode === 'navigate' && (name === '' || name === 'index.html')) {
    event.respondWith(caches.match('index.html', {cacheName: CACHE}).then((r) => r || fetch(request)));
  } else if (name !== null && FILES.includes(name) && !url.search) {
    event.respondWith(caches.match(name, {cacheName: CACHE}).then((r) => r || fromNetwork(request)));
  } else if (name !== null && LESSONS.includes(name + url.search)) {
    event.respondWith(caches.match(request, {cacheName: CACHE}).then((r) => r || fromNetwork(request)));
  } else {
    event.respondWith(fromNetwork(request));
  }
});
