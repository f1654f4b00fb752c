// The nearest-rank percentile every benchmark summary, verdict and timing test uses. A module of
// its own, with no imports, so the browserless verdict rules (verdict.mjs) load nothing of the
// browser side.

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted, p) {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}
