// The report's one script (strobe, src/core/present/report/hover.js): the value under the
// pointer on each chart, read from the JSON block #strobe-hover and shown with textContent.
// It fetches nothing and writes no markup; the report's Content-Security-Policy allows this
// exact text by its hash.
(() => {
  const block = document.getElementById('strobe-hover');
  if (!block) return;
  let charts;
  try {
    charts = JSON.parse(block.textContent);
  } catch {
    return;
  }
  const format = (value) => {
    if (!Number.isFinite(value)) return String(value);
    const size = Math.abs(value);
    if (size >= 1000) return Math.round(value).toLocaleString('en-US');
    if (size >= 100) return String(Math.round(value * 10) / 10);
    return String(Number(value.toPrecision(3)));
  };
  const toUnits = (t, value) =>
    t[1] === t[0] ? (t[2] + t[3]) / 2 : t[2] + ((value - t[0]) / (t[1] - t[0])) * (t[3] - t[2]);
  for (const figure of document.querySelectorAll('figure[data-chart]')) {
    const chart = charts[figure.dataset.chart];
    const svg = figure.querySelector('svg');
    const tip = figure.querySelector('.tip');
    if (!chart || !svg || !tip) continue;
    const dot = svg.querySelector('.hover-dot');
    const hide = () => {
      tip.hidden = true;
      if (dot) dot.setAttribute('visibility', 'hidden');
    };
    svg.addEventListener('pointerleave', hide);
    svg.addEventListener('pointermove', (event) => {
      const matrix = svg.getScreenCTM();
      if (!matrix) return;
      const at = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
      let best = null;
      let bestDistance = 24 * 24;
      for (const series of chart.s) {
        for (let i = 0; i + 1 < series.d.length; i += 2) {
          const dx = toUnits(series.x, series.d[i]) - at.x;
          const dy = toUnits(series.y, series.d[i + 1]) - at.y;
          const distance = dx * dx + dy * dy;
          if (distance < bestDistance) {
            bestDistance = distance;
            best = [series, i];
          }
        }
      }
      if (!best) return hide();
      const [series, i] = best;
      const x = series.d[i];
      const y = series.d[i + 1];
      const xText = series.k && series.k[x] !== undefined ? series.k[x] : format(x);
      const label = series.l ? series.l[i / 2] : '';
      const name = [series.n, label].filter(Boolean).join(' · ');
      tip.textContent = `${name ? name + ' — ' : ''}${series.xn}: ${xText} · ${series.yn}: ${format(y)}`;
      tip.hidden = false;
      const box = figure.getBoundingClientRect();
      tip.style.left = `${Math.max(0, Math.min(event.clientX - box.left + 12, box.width - 260))}px`;
      tip.style.top = `${event.clientY - box.top + 14}px`;
      if (dot) {
        dot.setAttribute('cx', toUnits(series.x, x));
        dot.setAttribute('cy', toUnits(series.y, y));
        dot.setAttribute('visibility', 'visible');
      }
    });
  }
  performance.mark('strobe-report:hover-ready');
  document.documentElement.dataset.hover = 'ready';
})();
