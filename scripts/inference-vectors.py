#!/usr/bin/env python3
"""Print the test vectors of strobe's statistical tests (src/core/inference/test_vectors.rs).

Every value is scipy's: the normal and Student-t distribution functions and quantiles, the
Mann-Whitney U test (two-sided, asymptotic, tie and continuity correction) and Welch's t-test.
Run it in a virtualenv with scipy and numpy installed:

    python3 -m venv /tmp/scipy && /tmp/scipy/bin/pip install scipy numpy
    /tmp/scipy/bin/python scripts/inference-vectors.py > src/core/inference/test_vectors.rs
    cargo fmt --all

The large samples are built by formulas the Rust tests repeat (`generated`), so no sample data
is stored but the small hand-written ones.
"""

import numpy as np
import scipy
from scipy import stats


def generated(count, multiplier, modulus, scale, offset):
    """`count` values with many ties: ((i * multiplier) % modulus) * scale + offset."""
    return [((i * multiplier) % modulus) * scale + offset for i in range(count)]


def rust_float(value):
    value = float(value)
    if np.isnan(value):
        return "f64::NAN"
    if np.isinf(value):
        return "f64::INFINITY" if value > 0 else "f64::NEG_INFINITY"
    text = repr(value)
    if "e" not in text and "." not in text:
        text += ".0"
    return text


def floats(values):
    return "&[" + ", ".join(rust_float(v) for v in values) + "]"


# Small samples written by hand: ties, identical samples, one and two samples, unequal n.
SMALL = [
    ("distinct", [1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]),
    ("overlapping", [1.1, 2.4, 3.3, 5.0, 6.1, 7.7], [2.0, 4.2, 4.9, 8.8, 9.1]),
    ("ties", [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0], [2.0, 3.0, 3.0, 4.0, 4.0, 5.0]),
    ("identical", [7.0, 7.0, 7.0, 7.0], [7.0, 7.0, 7.0]),
    ("one_each", [3.0], [4.0]),
    ("two_each", [1.0, 2.0], [3.0, 4.0]),
    ("one_and_three", [10.0], [1.0, 2.0, 3.0]),
    ("unequal_n", [929.0, 1462.0, 1336.0], [1049.0, 1065.0, 1057.0, 1051.0, 1060.0]),
    ("campaign", [1049.0, 1065.0, 1057.0], [929.0, 1462.0, 1336.0]),
    ("shifted", [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0],
     [12.0, 13.5, 14.0, 15.5, 16.0, 17.5, 18.0, 19.5]),
]

# Large samples from `generated`: (name, a's arguments, b's arguments).
LARGE = [
    ("thousands_shifted", (3000, 37, 101, 1.5, 0.0), (2500, 53, 103, 1.5, 2.0)),
    ("thousands_alike", (2000, 37, 101, 0.5, 10.0), (2000, 41, 101, 0.5, 10.0)),
]

print("//! scipy's values for the inference tests, printed by `scripts/inference-vectors.py`")
print(f"//! (scipy {scipy.__version__}, numpy {np.__version__}); regenerate, never edit by hand.")
print()
print("/// `(x, norm.cdf(x), norm.sf(x))`.")
print("pub const NORMAL_CDF: &[(f64, f64, f64)] = &[")
for x in [-40.0, -38.0, -20.0, -10.0, -8.5, -5.0, -3.0, -2.0, -1.5, -1.0, -0.7072, -0.5,
          -0.1, 0.0, 1e-8, 0.25, 0.5, 0.7072, 1.0, 1.96, 2.5, 3.0, 4.0, 6.0, 9.0, 12.0, 30.0]:
    print(f"    ({rust_float(x)}, {rust_float(stats.norm.cdf(x))}, {rust_float(stats.norm.sf(x))}),")
print("];")
print()
print("/// `(p, norm.ppf(p))`.")
print("pub const NORMAL_PPF: &[(f64, f64)] = &[")
for p in [1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.025, 0.05, 0.1, 0.3, 0.5, 0.6,
          0.9, 0.95, 0.975, 0.99, 0.999, 1 - 1e-10]:
    print(f"    ({rust_float(p)}, {rust_float(stats.norm.ppf(p))}),")
print("];")
print()
print("/// `(t, df, t.cdf(t, df), t.sf(t, df))`, fractional degrees of freedom included.")
print("pub const STUDENT_T_CDF: &[(f64, f64, f64, f64)] = &[")
for df in [1.0, 1.5, 2.0, 2.71, 3.0, 4.5, 9.0, 19.0, 37.25, 100.0, 1000.0]:
    for t in [-30.0, -4.0, -2.0, -0.5, 0.0, 0.3, 1.0, 2.5, 6.0, 50.0]:
        print(f"    ({rust_float(t)}, {rust_float(df)}, {rust_float(stats.t.cdf(t, df))}, "
              f"{rust_float(stats.t.sf(t, df))}),")
print("];")
print()
print("/// `(p, df, t.ppf(p, df))`.")
print("pub const STUDENT_T_PPF: &[(f64, f64, f64)] = &[")
for df in [1.0, 1.5, 2.0, 3.0, 4.0, 5.5, 9.0, 19.0, 38.0, 250.0]:
    for p in [1e-6, 0.025, 0.1, 0.5, 0.8, 0.975, 0.995]:
        print(f"    ({rust_float(p)}, {rust_float(df)}, {rust_float(stats.t.ppf(p, df))}),")
print("];")
print()
print("/// A two-sample case: its samples and scipy's results.")
print("pub struct TwoSampleCase {")
print("    /// What the case shows.")
print("    pub name: &'static str,")
print("    /// The first sample.")
print("    pub a: &'static [f64],")
print("    /// The second sample.")
print("    pub b: &'static [f64],")
print("    /// `mannwhitneyu(a, b, method=\"asymptotic\")`: `(statistic, pvalue)`.")
print("    pub mann_whitney: (f64, f64),")
print("    /// `ttest_ind(a, b, equal_var=False)`: `(statistic, pvalue, df)` (NaN where scipy")
print("    /// gives NaN).")
print("    pub welch: (f64, f64, f64),")
print("}")
print()


def results(a, b):
    mw = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
    with np.errstate(all="ignore"):
        w = stats.ttest_ind(a, b, equal_var=False)
    df = getattr(w, "df", float("nan"))
    return (mw.statistic, mw.pvalue), (w.statistic, w.pvalue, df)


print("/// Hand-written samples.")
print("pub const SMALL_CASES: &[TwoSampleCase] = &[")
for name, a, b in SMALL:
    (u, pu), (t, pt, df) = results(a, b)
    print(f"    TwoSampleCase {{ name: {name!r}, a: {floats(a)}, b: {floats(b)},".replace("'", '"'))
    print(f"        mann_whitney: ({rust_float(u)}, {rust_float(pu)}),")
    print(f"        welch: ({rust_float(t)}, {rust_float(pt)}, {rust_float(df)}) }},")
print("];")
print()
print("/// A large case: the arguments of `generated` for each sample, and scipy's results.")
print("pub struct LargeCase {")
print("    /// What the case shows.")
print("    pub name: &'static str,")
print("    /// `(count, multiplier, modulus, scale, offset)` of the first sample.")
print("    pub a: (usize, usize, usize, f64, f64),")
print("    /// The same for the second sample.")
print("    pub b: (usize, usize, usize, f64, f64),")
print("    /// As [`TwoSampleCase::mann_whitney`].")
print("    pub mann_whitney: (f64, f64),")
print("    /// As [`TwoSampleCase::welch`].")
print("    pub welch: (f64, f64, f64),")
print("}")
print()
print("/// Thousands of samples each, with many ties.")
print("pub const LARGE_CASES: &[LargeCase] = &[")
for name, ga, gb in LARGE:
    (u, pu), (t, pt, df) = results(generated(*ga), generated(*gb))
    def args(g):
        return f"({g[0]}, {g[1]}, {g[2]}, {rust_float(g[3])}, {rust_float(g[4])})"
    print(f"    LargeCase {{ name: \"{name}\", a: {args(ga)}, b: {args(gb)},")
    print(f"        mann_whitney: ({rust_float(u)}, {rust_float(pu)}),")
    print(f"        welch: ({rust_float(t)}, {rust_float(pt)}, {rust_float(df)}) }},")
print("];")
print()
print("/// `(sample, mean, sd (ddof=1), t.ppf(0.975, n-1) * sd / sqrt(n))` across runs.")
print("pub const ACROSS_RUNS: &[(&[f64], f64, f64, f64)] = &[")
for sample in [[1049.0, 1065.0, 1057.0], [929.0, 1462.0, 1336.0], [5.0, 5.0],
               [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0,
                15.0, 16.0, 17.0, 18.0, 19.0, 20.0]]:
    n = len(sample)
    sd = float(np.std(sample, ddof=1))
    half = float(stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n))
    print(f"    ({floats(sample)}, {rust_float(np.mean(sample))}, {rust_float(sd)}, {rust_float(half)}),")
print("];")
print()
print("/// `(p-values, Holm-adjusted p-values)` as statsmodels' `multipletests(method=\"holm\")`")
print("/// computes them (step-down, running maximum, capped at 1).")
print("pub const HOLM: &[(&[f64], &[f64])] = &[")
for ps in [[0.01, 0.04, 0.03, 0.005], [0.5, 0.2], [0.04], [0.02, 0.02, 0.9, 0.001]]:
    order = np.argsort(ps, kind="stable")
    m = len(ps)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[index]))
        adjusted[index] = running
    print(f"    ({floats(ps)}, {floats(adjusted)}),")
print("];")
