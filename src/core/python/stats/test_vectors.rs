//! Deterministic inputs shared by the stats and pyjson tests. A Python 3.11.7 script draws the
//! same inputs from the same SplitMix64 stream and digests its results, so the tests compare one
//! SHA-256 each and never need Python at run time.

// The Python side, verbatim (run as `python3 gen.py stats 3000`, `gen.py repr 200000`,
// `gen.py strings 20000`; each prints the digest a test pins):
//
// import math, statistics, struct, hashlib, sys, json
// M = (1 << 64) - 1
// class SplitMix64:
//     def __init__(self, seed): self.state = seed & M
//     def next(self):
//         self.state = (self.state + 0x9E3779B97F4A7C15) & M
//         z = self.state
//         z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
//         z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
//         return z ^ (z >> 31)
// def fb(b): return struct.unpack('<d', struct.pack('<Q', b))[0]
// def bits(x): return struct.unpack('<Q', struct.pack('<d', x))[0]
// def compose(sign, biased, mant): return fb((sign << 63) | (biased << 52) | (mant & ((1 << 52) - 1)))
//
// def dataset(r):
//     kind = r.next() % 5
//     n = 200 + r.next() % 1800 if r.next() % 10 == 0 else 1 + r.next() % 40
//     out = []
//     if kind == 0:
//         for _ in range(n): out.append(compose(r.next() & 1, 1 + r.next() % 1999, r.next()))
//     elif kind == 1:
//         c = 1023 + r.next() % 81 - 40
//         for _ in range(n): out.append(compose(1 if r.next() % 8 == 0 else 0, c + r.next() % 3 - 1, r.next()))
//     elif kind == 2:
//         base = (1023 + r.next() % 61 - 30) << 52 | (r.next() & ((1 << 52) - 1))
//         for _ in range(n): out.append(fb(base + r.next() % 4))
//     elif kind == 3:
//         for _ in range(n):
//             if r.next() % 2 == 0: out.append(float(r.next() % 1000000000) / 1000000.0)
//             else: out.append(float(r.next() % 100000))
//     else:
//         for _ in range(n): out.append(compose(r.next() & 1, r.next() % 3, r.next()))
//     return out
//
// def stats_line(v):
//     n = len(v)
//     fs = math.fsum(v); fm = statistics.fmean(v)
//     sd = statistics.stdev(v) if n > 1 else 0.0
//     mn = statistics.mean(v)
//     half = 1.96 * sd / math.sqrt(n)
//     return ' '.join('%016x' % bits(x) for x in (fs, fm, sd, mn, fm - half, fm + half))
//
// def repr_double(r):
//     kind = r.next() % 5
//     if kind == 0:
//         while True:
//             x = fb(r.next())
//             if math.isfinite(x): return x
//     if kind == 1: return compose(r.next() & 1, 1023 - 100 + r.next() % 300, r.next())
//     if kind == 2: return float(r.next() % 10**15) / float(10 ** (r.next() % 23))
//     if kind == 3: return float(r.next() % (1 << 53)) * float(10 ** (r.next() % 23))
//     return compose(r.next() & 1, r.next() % 2, r.next())
//
// def random_string(r):
//     out = []
//     for _ in range(r.next() % 21):
//         cls = r.next() % 4
//         if cls == 0: cp = r.next() % 0x80
//         elif cls == 1: cp = 0x80 + r.next() % (0x800 - 0x80)
//         elif cls == 2:
//             cp = 0x800 + r.next() % (0x10000 - 0x800 - 0x800)
//             if cp >= 0xD800: cp += 0x800
//         else: cp = 0x10000 + r.next() % (0x110000 - 0x10000)
//         out.append(chr(cp))
//     return ''.join(out)
//
// if __name__ == '__main__':
//     what = sys.argv[1]
//     if what == 'stats':
//         r = SplitMix64(20261005); h = hashlib.sha256()
//         for i in range(int(sys.argv[2])):
//             h.update((stats_line(dataset(r)) + '\n').encode())
//         print(h.hexdigest())
//     elif what == 'repr':
//         r = SplitMix64(1717); h = hashlib.sha256()
//         for i in range(int(sys.argv[2])):
//             h.update((repr(repr_double(r)) + '\n').encode())
//         print(h.hexdigest())
//     elif what == 'strings':
//         r = SplitMix64(65536); h = hashlib.sha256()
//         for i in range(int(sys.argv[2])):
//             h.update((json.dumps(random_string(r), ensure_ascii=True) + '\n').encode())
//         print(h.hexdigest())

/// SplitMix64, the generator both sides share.
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Python's `compose(sign, biased, mant)`.
fn compose(sign: u64, biased_exponent: u64, mantissa: u64) -> f64 {
    f64::from_bits((sign << 63) | (biased_exponent << 52) | (mantissa & ((1 << 52) - 1)))
}

/// Python's `dataset(r)`; every draw happens in the same order as there.
pub(crate) fn random_data_set(rng: &mut SplitMix64) -> Vec<f64> {
    let kind = rng.next() % 5;
    let count = if rng.next() % 10 == 0 {
        200 + rng.next() % 1800
    } else {
        1 + rng.next() % 40
    };
    let mut values = Vec::new();
    match kind {
        0 => {
            for _ in 0..count {
                let sign = rng.next() & 1;
                let exponent = 1 + rng.next() % 1999;
                values.push(compose(sign, exponent, rng.next()));
            }
        }
        1 => {
            let center = 1023 + rng.next() % 81 - 40;
            for _ in 0..count {
                let sign = u64::from(rng.next() % 8 == 0);
                let exponent = center + rng.next() % 3 - 1;
                values.push(compose(sign, exponent, rng.next()));
            }
        }
        2 => {
            let exponent = 1023 + rng.next() % 61 - 30;
            let base = (exponent << 52) | (rng.next() & ((1 << 52) - 1));
            for _ in 0..count {
                values.push(f64::from_bits(base + rng.next() % 4));
            }
        }
        3 => {
            for _ in 0..count {
                if rng.next() % 2 == 0 {
                    values.push((rng.next() % 1_000_000_000) as f64 / 1_000_000.0);
                } else {
                    values.push((rng.next() % 100_000) as f64);
                }
            }
        }
        _ => {
            for _ in 0..count {
                let sign = rng.next() & 1;
                let exponent = rng.next() % 3;
                values.push(compose(sign, exponent, rng.next()));
            }
        }
    }
    values
}

/// 10^0 ..= 10^22, every one exact in an f64 (as Python's `float(10 ** k)`).
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Python's `repr_double(r)`: raw bit patterns, decimal exponents around the fixed/exponent
/// switch, decimal fractions, large integers scaled by powers of ten, and subnormals.
pub(crate) fn random_double(rng: &mut SplitMix64) -> f64 {
    match rng.next() % 5 {
        0 => loop {
            let value = f64::from_bits(rng.next());
            if value.is_finite() {
                return value;
            }
        },
        1 => {
            let sign = rng.next() & 1;
            let exponent = 1023 - 100 + rng.next() % 300;
            compose(sign, exponent, rng.next())
        }
        2 => {
            let numerator = (rng.next() % 1_000_000_000_000_000) as f64;
            numerator / POWERS_OF_TEN[(rng.next() % 23) as usize]
        }
        3 => {
            let integer = (rng.next() % (1 << 53)) as f64;
            integer * POWERS_OF_TEN[(rng.next() % 23) as usize]
        }
        _ => {
            let sign = rng.next() & 1;
            let exponent = rng.next() % 2;
            compose(sign, exponent, rng.next())
        }
    }
}

/// Python's `random_string(r)`: up to 20 code points from ASCII (controls included), two-
/// and three-byte UTF-8 (surrogates skipped) and astral planes.
pub(crate) fn random_string(rng: &mut SplitMix64) -> String {
    let length = rng.next() % 21;
    let mut text = String::new();
    for _ in 0..length {
        let code_point = match rng.next() % 4 {
            0 => rng.next() % 0x80,
            1 => 0x80 + rng.next() % (0x800 - 0x80),
            2 => {
                let low = 0x800 + rng.next() % (0x10000 - 0x800 - 0x800);
                if low >= 0xD800 {
                    low + 0x800
                } else {
                    low
                }
            }
            _ => 0x10000 + rng.next() % (0x110000 - 0x10000),
        };
        let character = u32::try_from(code_point)
            .ok()
            .and_then(char::from_u32)
            .expect("generator yields scalar values only");
        text.push(character);
    }
    text
}

/// Lowercase hex of a digest.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
