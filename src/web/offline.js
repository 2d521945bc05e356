// offline.js — the page without the network (issue 40, item 6): registers the service
// worker (sw.js, written by make web with the site's content hash as its version), which
// keeps the site in the browser's cache after the first visit. Only where browsers allow
// one (https, or http on localhost); a file:// page runs as before, online only.
'use strict';
if ('serviceWorker' in navigator && /^https?:$/.test(location.protocol)) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('sw.js').catch((e) => console.warn('attnviz: no offline copy: ' + e.message));
  });
}
