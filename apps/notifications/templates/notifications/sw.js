// The club's service worker (served at /sw.js for the whole site's scope by
// apps/notifications/pwa.py). It shows pushes and opens their link, and serves the offline
// page when a page cannot be loaded. It caches the offline page and its look only: never game
// state, never a page with a person's data.
const CACHE = "{{ cache }}";
const OFFLINE = "{{ offline }}";
const KEEP = [OFFLINE{% for url in keep %}, "{{ url }}"{% endfor %}];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE)
    .then((cache) => cache.addAll(KEEP.map((u) => new Request(u, { credentials: "omit" }))))
    .then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

// Pages go to the network; only when it fails does the offline page answer. Nothing else is
// touched (sockets, JSON, static files go their usual way).
self.addEventListener("fetch", (event) => {
  if (event.request.mode !== "navigate") return;
  event.respondWith(fetch(event.request).catch(() => caches.match(OFFLINE)));
});

self.addEventListener("push", (event) => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch (e) { data = { title: event.data.text() }; }
  const title = data.title || "Domino Club";
  event.waitUntil(self.registration.showNotification(title, {
    body: data.body || "", tag: data.tag, icon: "{{ icon }}", badge: "{{ icon }}",
    data: { link: data.link || "/" },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const link = (event.notification.data && event.notification.data.link) || "/";
  event.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true })
    .then((windows) => {
      for (const w of windows) {
        if (w.url === link && "focus" in w) return w.focus();
      }
      return self.clients.openWindow(link);
    }));
});
