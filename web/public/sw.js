// The service worker: keeps the app shell (the built page, its scripts and styles, the
// icons, the offline page) so the app opens without a network, and shows Web Push
// notifications. It never stores an API answer: /v1/ belongs to a signed-in user.
const SHELL = "shell-v1";
const SHELL_FILES = ["/", "/index.html", "/offline.html", "/manifest.webmanifest", "/icon.svg", "/icon-192.png"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(SHELL_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== SHELL).map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

function isShell(url) {
  return url.origin === self.location.origin && !url.pathname.startsWith("/v1/");
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || !isShell(url)) return; // the API goes to the network only
  if (request.mode === "navigate") {
    // The page itself: fresh when online, the cached shell or the offline page otherwise.
    event.respondWith(
      fetch(request).catch(() => caches.match("/index.html").then((page) => page || caches.match("/offline.html"))),
    );
    return;
  }
  // Built assets have content hashes in their names: the cached copy is the right one.
  event.respondWith(
    caches.match(request).then(
      (cached) =>
        cached ||
        fetch(request).then((response) => {
          if (response.ok && url.pathname.startsWith("/assets/")) {
            const copy = response.clone();
            void caches.open(SHELL).then((cache) => cache.put(request, copy));
          }
          return response;
        }),
    ),
  );
});

// A push carries {id, kind, title, body, url}; the id is the tag, so a notification that
// also arrived another way is shown once.
self.addEventListener("push", (event) => {
  let data;
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: "Assistant", body: event.data ? event.data.text() : "" };
  }
  const title = data.title || "Assistant";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: data.body || "",
      tag: data.id,
      icon: "/icon-192.png",
      data: { url: data.url || "/" },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL((event.notification.data && event.notification.data.url) || "/", self.location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      const open = windows.find((w) => new URL(w.url).origin === self.location.origin);
      if (open) return open.navigate(target).then((w) => (w || open).focus());
      return self.clients.openWindow(target);
    }),
  );
});
