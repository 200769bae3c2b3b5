// The service worker of the notices: shows a Web Push sent by the server (web/notices/push.py:
// {title, body, url, tag, lang}, already in the player's language) and opens its table when tapped.
self.addEventListener("push", (event) => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch { data = {body: event.data ? event.data.text() : ""}; }
  event.waitUntil(self.registration.showNotification(data.title || "ludoteca", {
    body: data.body || "", tag: data.tag || undefined, lang: data.lang || undefined,
    icon: "/favicon.ico", data: {url: data.url || "/"},
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || "/";
  event.waitUntil(self.clients.matchAll({type: "window", includeUncontrolled: true}).then((windows) => {
    for (const w of windows) if (w.url === url && "focus" in w) return w.focus();
    return self.clients.openWindow(url);
  }));
});
