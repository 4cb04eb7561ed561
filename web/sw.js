// The page's service worker: once the page has been loaded, it works offline.
//
// * The page itself (HTML, JS, CSS, the wasm-bindgen glue and the .wasm) is cached when the
//   worker installs, and served network first: a new build is seen as soon as the server
//   is reachable, the cached copy when it is not.
// * Any other file of this origin the page fetches (the model, tokenizer, config and voice
//   named in the URL) is cached the first time and then served from the cache: the
//   checkpoint (hundreds of MB) is read from the server once. Files picked from the disk
//   never pass through here.
//
// scripts/wasm/build.sh writes the build's hash in place of the marker below, so that a
// new build is a new worker with a new cache (and the old caches are deleted).
const BUILD = "__POCKET_TTS_BUILD__";
const SHELL_CACHE = `pocket-tts-shell-${BUILD}`;
const FILES_CACHE = "pocket-tts-files-v1";
const SHELL = ["./", "index.html", "main.js", "flowlm-worker.js", "mimi-worker.js", "style.css",
  "pkg/pocket_tts_wasm.js", "pkg/pocket_tts_wasm_bg.wasm"];

self.addEventListener("install", (ev) => {
  ev.waitUntil((async () => {
    const cache = await caches.open(SHELL_CACHE);
    await cache.addAll(SHELL);
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (ev) => {
  ev.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("pocket-tts-shell-") && name !== SHELL_CACHE) await caches.delete(name);
    }
    // The page that registered this worker is served by it from now on (its model files
    // are cached as it fetches them), without waiting for a reload.
    await self.clients.claim();
  })());
});

const shellPaths = new Set(SHELL.map((p) => new URL(p, self.registration.scope).pathname));

// Each fetch gives the page its response at once and a promise of the cache write, which
// the fetch event waits for (`waitUntil` is called while the event is dispatched: called
// later, after an `await`, Chromium refuses it and nothing was ever stored).
function stored(cacheName, request, response) {
  if (!response.ok) return Promise.resolve();
  const copy = response.clone();
  return caches.open(cacheName).then((c) => c.put(request, copy)).catch(() => {});
}

function networkFirst(request) {
  const fetched = fetch(request);
  const done = fetched.then((r) => stored(SHELL_CACHE, request, r), () => {});
  const response = fetched.catch(async (e) => {
    // Offline: the cached page (a page URL's query names files, not another page).
    const cache = await caches.open(SHELL_CACHE);
    const cached = await cache.match(request, { ignoreSearch: request.mode === "navigate" });
    if (cached) return cached;
    throw e;
  });
  return { response, done };
}

function cacheFirst(request) {
  const lookup = caches.match(request, { cacheName: FILES_CACHE });
  const fetched = lookup.then((cached) => cached ? null : fetch(request));
  const response = Promise.all([lookup, fetched]).then(([cached, r]) => cached ?? r);
  const done = fetched.then((r) => r ? stored(FILES_CACHE, request, r) : undefined, () => {});
  return { response, done };
}

self.addEventListener("fetch", (ev) => {
  const request = ev.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  const shell = request.mode === "navigate" || shellPaths.has(url.pathname);
  const { response, done } = shell ? networkFirst(request) : cacheFirst(request);
  ev.respondWith(response);
  ev.waitUntil(done);
});
