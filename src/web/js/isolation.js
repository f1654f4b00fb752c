// Cross-origin isolation on hosts that cannot send COOP/COEP
// (docs/operate/hosting.md, "Hosts without headers"): registers isolation_sw.js, which adds them to
// the site's own responses, and reloads once it controls the page. A host that sends the headers
// (or a browser without service workers, or a page that is not a secure context) is left as it is;
// one reload at most per tab, so a service worker that cannot help never loops.
(() => {
  if (window.crossOriginIsolated !== false || !window.isSecureContext) return;
  const workers = navigator.serviceWorker;
  const RELOADED = 'strobe-isolation-reloaded';
  if (!workers || sessionStorage.getItem(RELOADED)) return;
  const reload = () => {
    sessionStorage.setItem(RELOADED, '1');
    window.location.reload();
  };
  workers
    .register(new URL('isolation_sw.js', document.currentScript.src))
    .then((registration) => {
      if (workers.controller) return;
      if (registration.active) {
        reload();
        return;
      }
      workers.addEventListener('controllerchange', reload, { once: true });
    })
    .catch((error) => console.warn('strobe: the isolation service worker did not register:', error));
})();
