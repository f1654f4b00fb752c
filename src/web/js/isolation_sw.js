// A service worker for hosts that cannot send headers (GitHub Pages): it adds COOP/COEP to the
// site's own responses, so the page is cross-origin isolated (the 5 µs timer) after one reload.
// docs/operate/hosting.md, "Hosts without headers". Loaded by isolation.js; does nothing elsewhere.
//
// It must never sit between strobe and a benchmarked server: a fetch event before every
// request would add its dispatch (and a worker start-up) to the measured time. So requests to
// other origins are routed straight to the network by the static routing API (Chromium 123+),
// which decides without waking this worker, and the fetch handler leaves them alone
// elsewhere.
const SITE = new URL(self.registration.scope);

// Requests to other origins that reached the fetch handler: 0 while static routing works (the
// hosting test reads it; nothing else does).
self.otherOriginFetchEvents = 0;

self.addEventListener('install', (event) => {
  if (event.addRoutes) {
    event.addRoutes([
      {
        condition: {
          urlPattern: new URLPattern({
            protocol: SITE.protocol.replace(':', ''),
            hostname: SITE.hostname,
            port: SITE.port,
          }),
        },
        source: 'fetch-event',
      },
      { condition: { urlPattern: new URLPattern({}) }, source: 'network' },
    ]);
  }
  self.skipWaiting();
});

self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (new URL(request.url).origin !== SITE.origin) {
    self.otherOriginFetchEvents += 1;
    return;
  }
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  event.respondWith(
    fetch(request).then((response) => {
      if (response.status === 0) return response;
      const headers = new Headers(response.headers);
      headers.set('Cross-Origin-Opener-Policy', 'same-origin');
      headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
      headers.set('Cross-Origin-Resource-Policy', 'same-origin');
      return new Response(response.body, {
        status: response.status,
        statusText: response.statusText,
        headers,
      });
    }),
  );
});
