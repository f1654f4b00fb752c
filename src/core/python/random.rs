//! A bit-exact port of CPython's `random.Random(int)`: MT19937 keyed the way CPython keys it
//! from an integer seed, and `random()` with its 53-bit resolution.
//!
//! The sampled context plan (ARTIFACT.md §1.2, §11.16) is defined as "whatever CPython's
//! `Random(seed).random()` returns", so an artifact's `context_distribution` can only be
//! reproduced if this generator matches CPython draw for draw. The arrival schedules of
//! request-rate load draw their gaps with CPython 3.11's `expovariate` and `gammavariate`, so a
//! Python script with the same seed draws the same gaps: to the bit where the platform's `log`,
//! `exp` and `pow` are glibc's (native builds on Linux); in the browser, whose math library
//! differs from glibc's in the last bit for a few draws in a hundred, to within a few ulps.

/// Number of 32-bit words in the Mersenne Twister state.
const STATE_WORDS: usize = 624;
/// Offset of the word mixed into each regenerated word.
const SHIFT_SIZE: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// CPython's `random.Random` generator (MT19937), seeded like `random.Random(seed)` for an int.
#[derive(Clone)]
pub struct PyRandom {
    state: [u32; STATE_WORDS],
    /// Index of the next state word to temper; `STATE_WORDS` means "regenerate first".
    next_index: usize,
}

impl std::fmt::Debug for PyRandom {
    // The 624-word state is noise in test failures; the position is what helps.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRandom")
            .field("next_index", &self.next_index)
            .finish_non_exhaustive()
    }
}

impl PyRandom {
    /// The generator `random.Random(seed)` gives for a Python int `seed`.
    ///
    /// CPython seeds from `abs(seed)` (so `-5` and `5` give the same stream) split into 32-bit
    /// words, least significant word first, with at least one word (so `0` is the key `[0]`).
    pub fn new(seed: i64) -> Self {
        let magnitude = seed.unsigned_abs();
        // Truncation is the point: these are the low and high 32-bit words of the magnitude.
        let low = magnitude as u32;
        let high = (magnitude >> 32) as u32;
        if high == 0 {
            Self::from_key(&[low])
        } else {
            Self::from_key(&[low, high])
        }
    }

    /// The generator CPython builds from an already split key (`init_by_array`).
    ///
    /// `key` holds the seed's magnitude in 32-bit words, least significant first, without
    /// high zero words; this is how seeds wider than 64 bits can be reproduced. An empty key is
    /// treated as `[0]`, as CPython never passes an empty key.
    pub fn from_key(key: &[u32]) -> Self {
        let key: &[u32] = if key.is_empty() { &[0] } else { key };
        let mut generator = Self::from_u32_seed(19_650_218);
        let mt = &mut generator.state;
        let mut i = 1usize;
        let mut j = 0usize;
        for _ in 0..STATE_WORDS.max(key.len()) {
            let previous = mt[i - 1] ^ (mt[i - 1] >> 30);
            // `j` is below key.len(), which is far below 2^32 for any real seed; the wrapping
            // cast mirrors CPython's uint32_t arithmetic.
            mt[i] = (mt[i] ^ previous.wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= STATE_WORDS {
                mt[0] = mt[STATE_WORDS - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..STATE_WORDS - 1 {
            let previous = mt[i - 1] ^ (mt[i - 1] >> 30);
            mt[i] = (mt[i] ^ previous.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= STATE_WORDS {
                mt[0] = mt[STATE_WORDS - 1];
                i = 1;
            }
        }
        // Guarantees a non-zero initial state, exactly as the reference does.
        mt[0] = 0x8000_0000;
        generator
    }

    /// MT19937's `init_genrand`: the base state `init_by_array` starts from.
    fn from_u32_seed(seed: u32) -> Self {
        let mut state = [0u32; STATE_WORDS];
        state[0] = seed;
        for i in 1..STATE_WORDS {
            let previous = state[i - 1] ^ (state[i - 1] >> 30);
            state[i] = previous.wrapping_mul(1_812_433_253).wrapping_add(i as u32);
        }
        Self {
            state,
            next_index: STATE_WORDS,
        }
    }

    /// Refills the whole state block (the "twist").
    fn regenerate(&mut self) {
        let mt = &mut self.state;
        for k in 0..STATE_WORDS {
            let y = (mt[k] & UPPER_MASK) | (mt[(k + 1) % STATE_WORDS] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            mt[k] = mt[(k + SHIFT_SIZE) % STATE_WORDS] ^ (y >> 1) ^ mag;
        }
        self.next_index = 0;
    }

    /// The next 32-bit output (`genrand_uint32`; equals Python's `getrandbits(32)`).
    pub fn next_u32(&mut self) -> u32 {
        if self.next_index >= STATE_WORDS {
            self.regenerate();
        }
        let mut y = self.state[self.next_index];
        self.next_index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// The next float in `[0.0, 1.0)`, bit-identical to Python's `random()`.
    ///
    /// Two outputs give 27 and 26 bits (`a >> 5`, `b >> 6`), combined into a 53-bit integer
    /// and scaled by 2^-53, so every value is exact in an `f64`.
    pub fn random(&mut self) -> f64 {
        let high_bits = f64::from(self.next_u32() >> 5);
        let low_bits = f64::from(self.next_u32() >> 6);
        (high_bits * 67_108_864.0 + low_bits) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// CPython's `getrandbits(k)` for `k` in 1..=64: whole 32-bit words, the low word first,
    /// the last one shifted down to the bits still wanted.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        debug_assert!((1..=64).contains(&k));
        if k <= 32 {
            return u64::from(self.next_u32() >> (32 - k));
        }
        let low = u64::from(self.next_u32());
        let high = u64::from(self.next_u32() >> (64 - k));
        (high << 32) | low
    }

    /// CPython's `_randbelow(n)` for `n > 0`: `getrandbits(n.bit_length())` until below `n`.
    pub fn randbelow(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let bits = u64::BITS - n.leading_zeros();
        loop {
            let r = self.getrandbits(bits);
            if r < n {
                return r;
            }
        }
    }

    /// CPython's `shuffle(x)` (3.11 and later): for `i` from the end down to 1, swap `x[i]`
    /// with `x[randbelow(i + 1)]`. The same seed gives Python's order.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.randbelow(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }

    /// CPython's `expovariate(lambd)`: an exponential variate of mean `1 / lambd`, drawn as
    /// `-log(1 - random()) / lambd` (one draw).
    pub fn expovariate(&mut self, lambd: f64) -> f64 {
        -(1.0 - self.random()).ln() / lambd
    }

    /// CPython 3.11's `gammavariate(alpha, beta)`: a gamma variate of shape `alpha` and scale
    /// `beta` (mean `alpha * beta`), by the same algorithms and the same draws: Cheng's
    /// rejection method above 1, the exponential at 1, Kennedy and Gentle's algorithm GS below.
    /// `None` unless both parameters are finite and above 0 (CPython raises `ValueError`).
    pub fn gammavariate(&mut self, alpha: f64, beta: f64) -> Option<f64> {
        if !(alpha > 0.0 && beta > 0.0 && alpha.is_finite() && beta.is_finite()) {
            return None;
        }
        // CPython's module constants: LOG4 = log(4.0), SG_MAGICCONST = 1.0 + log(4.5).
        const LOG4: f64 = 1.386_294_361_119_890_6;
        const SG_MAGICCONST: f64 = 2.504_077_396_776_274;
        if alpha > 1.0 {
            let ainv = (2.0 * alpha - 1.0).sqrt();
            let bbb = alpha - LOG4;
            let ccc = alpha + ainv;
            loop {
                let u1 = self.random();
                if !(1e-7 < u1 && u1 < 0.999_999_9) {
                    continue;
                }
                let u2 = 1.0 - self.random();
                let v = (u1 / (1.0 - u1)).ln() / ainv;
                let x = alpha * v.exp();
                let z = u1 * u1 * u2;
                let r = bbb + ccc * v - x;
                if r + SG_MAGICCONST - 4.5 * z >= 0.0 || r >= z.ln() {
                    return Some(x * beta);
                }
            }
        } else if alpha == 1.0 {
            Some(-(1.0 - self.random()).ln() * beta)
        } else {
            let e = std::f64::consts::E;
            loop {
                let u = self.random();
                let b = (e + alpha) / e;
                let p = b * u;
                let x = if p <= 1.0 {
                    p.powf(1.0 / alpha)
                } else {
                    -((b - p) / alpha).ln()
                };
                let u1 = self.random();
                let accepted = if p > 1.0 {
                    u1 <= x.powf(alpha - 1.0)
                } else {
                    u1 <= (-x).exp()
                };
                if accepted {
                    return Some(x * beta);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Generated with CPython 3.11.7:
    //   r = random.Random(seed); [struct.unpack('<Q', struct.pack('<d', r.random()))[0]
    //                             for _ in range(5)]
    //   r = random.Random(seed); [r.getrandbits(32) for _ in range(3)]
    const RANDOM_VECTORS: &[(i64, [u64; 5], [u32; 3])] = &[
        (
            0,
            [
                0x3feb0580f98a7dbe,
                0x3fe84129978f9c1a,
                0x3fdaeaa51052e978,
                0x3fd092178fb945a6,
                0x3fe05c5ccdf19707,
            ],
            [3626764237, 1654615998, 3255389356],
        ),
        (
            1,
            [
                0x3fc132d8f91b7584,
                0x3feb1e2d5b3584f8,
                0x3fe870d778409f13,
                0x3fd0530d08f17f5c,
                0x3fdfb5355e16737a,
            ],
            [577090037, 2444712010, 3639700191],
        ),
        (
            42,
            [
                0x3fe4762f307200c5,
                0x3f999c6b5eeb2060,
                0x3fd19a1491f589dc,
                0x3fcc922b623b8c1c,
                0x3fe7912c1468f47e,
            ],
            [2746317213, 478163327, 107420369],
        ),
        (
            1717,
            [
                0x3fe8f0a560b088cd,
                0x3fcd48369f150e28,
                0x3fee066cb0de20b4,
                0x3fbdd85ee177c878,
                0x3fe12f1fe8e45cb5,
            ],
            [3347393308, 740438906, 982543654],
        ),
        (
            -5,
            [
                0x3fe3eecf89059360,
                0x3fe7bcb8116f23ee,
                0x3fe97239c6c3047f,
                0x3fee288d7f5db50c,
                0x3fe7ad3fc69bae32,
            ],
            [2675342405, 1097127993, 3185950873],
        ),
        (
            (1 << 32) + 7,
            [
                0x3fccdd79ac3f8360,
                0x3fd6f3517abe7aa2,
                0x3fe99351583fc19a,
                0x3feebb3d298880ee,
                0x3fed82da8a9e3c66,
            ],
            [968553300, 3287823873, 1540179448],
        ),
        (
            i64::MAX,
            [
                0x3fd443e8e5409ca6,
                0x3fe43346b887de9d,
                0x3fe9b6b765f6b847,
                0x3fdd058d20dfba84,
                0x3fde83c5ee300a8a,
            ],
            [1359979423, 2819855560, 2711238091],
        ),
        (
            i64::MIN,
            [
                0x3fe1b5fa2193586f,
                0x3fee198384d65bb9,
                0x3fcef9ab7f81e664,
                0x3feb3dbe4202321d,
                0x3fb5b28d2b6d4850,
            ],
            [2377109768, 1691753470, 4039908392],
        ),
    ];

    #[test]
    fn random_matches_cpython_bit_for_bit() {
        for (seed, expected_bits, _) in RANDOM_VECTORS {
            let mut generator = PyRandom::new(*seed);
            let got: Vec<u64> = (0..5).map(|_| generator.random().to_bits()).collect();
            assert_eq!(got, expected_bits.to_vec(), "seed {seed}");
        }
    }

    #[test]
    fn next_u32_matches_cpython_getrandbits_32() {
        for (seed, _, expected_words) in RANDOM_VECTORS {
            let mut generator = PyRandom::new(*seed);
            let got: Vec<u32> = (0..3).map(|_| generator.next_u32()).collect();
            assert_eq!(got, expected_words.to_vec(), "seed {seed}");
        }
    }

    #[test]
    fn negative_seed_is_seeded_by_its_absolute_value() {
        let mut negative = PyRandom::new(-1717);
        let mut positive = PyRandom::new(1717);
        for _ in 0..10 {
            assert_eq!(negative.random().to_bits(), positive.random().to_bits());
        }
    }

    #[test]
    fn explicit_key_matches_integer_seed() {
        let seed: i64 = (1 << 32) + 7;
        let mut from_int = PyRandom::new(seed);
        let mut from_words = PyRandom::from_key(&[7, 1]);
        let mut from_empty = PyRandom::from_key(&[]);
        let mut from_zero = PyRandom::new(0);
        for _ in 0..5 {
            assert_eq!(from_int.next_u32(), from_words.next_u32());
            assert_eq!(from_empty.next_u32(), from_zero.next_u32());
        }
    }

    #[test]
    fn draws_stay_in_unit_interval_across_state_refills() {
        // 2,000 draws cross several 624-word regenerations.
        let mut generator = PyRandom::new(99);
        for _ in 0..2_000 {
            let u = generator.random();
            assert!((0.0..1.0).contains(&u), "{u}");
        }
    }

    /// CPython 3.11.7: `random.Random(seed)` then 3,000 draws; the SHA-256 of their
    /// little-endian IEEE bits, and the first three draws' bits:
    /// `hashlib.sha256(b"".join(struct.pack("<d", v) for v in vals)).hexdigest()`.
    /// (seed, variate, first parameter, second parameter, digest, first three draws' bits).
    type VariateVector = (i64, &'static str, f64, f64, &'static str, [u64; 3]);

    const VARIATE_VECTORS: [VariateVector; 6] = [
        (
            0,
            "expo",
            3.7,
            0.0,
            "00929a2999744933950384d1e56026bc0b3d73274987a29dcef99347388754fb",
            [0x3fe0177c166e194b, 0x3fd889d7df89c9dc, 0x3fc2e0f41fb74c09],
        ),
        (
            1717,
            "expo",
            0.01,
            0.0,
            "5a7b388d4ba3cc3e462721e739da2fa1869e71f3fe79b89cca1641b27a2d12ff",
            [0x4062e424301c3759, 0x4039f9f418bda6f0, 0x4071685884a7a42b],
        ),
        (
            0,
            "gamma",
            0.5,
            2.0,
            "35c0652770bb978ea3960e5a9f5f3f8e939b5ac88fcf878f620c0ee5f90f34de",
            [0x3fdfbc5b3869604e, 0x3fe77344b8098503, 0x3ffb8e5e1478958d],
        ),
        (
            1717,
            "gamma",
            1.0,
            0.25,
            "6cd3a562514c2e6399632a45770a0dff958142adb23fe9ae26f1af60e7bdd9d7",
            [0x3fd82e42ccf0eaaf, 0x3fb09ff861c10eae, 0x3fe6481f621e42c6],
        ),
        (
            0,
            "gamma",
            2.5,
            0.4,
            "573d5a3e7e22491ee39e8e371ed29e308ec99b33ffe4a653afecacc6d35cb93a",
            [0x4002a349085aec0a, 0x3feb4345286bf2e8, 0x3ff05d6d822b7c77],
        ),
        (
            1717,
            "gamma",
            0.05,
            20.0,
            "f424340c299a953763c5b1c2b14c9748f5b4e9ca85fa08d6de078b9968eb7eba",
            [0x3fc9349676dcd886, 0x40201bde83aa238c, 0x3f1e0528498c1f0b],
        ),
    ];

    #[test]
    fn variates_match_cpython_draw_for_draw() {
        use sha2::{Digest, Sha256};
        for (seed, kind, first, second, digest, head) in VARIATE_VECTORS {
            let mut random = PyRandom::new(seed);
            let values: Vec<f64> = (0..3000)
                .map(|_| match kind {
                    "expo" => random.expovariate(first),
                    _ => random
                        .gammavariate(first, second)
                        .expect("valid parameters"),
                })
                .collect();
            let bits: Vec<u64> = values.iter().map(|value| value.to_bits()).collect();
            assert_eq!(bits[..3], head, "{seed} {kind} {first} {second}");
            let mut hasher = Sha256::new();
            for value in &values {
                hasher.update(value.to_le_bytes());
            }
            let hex: String = hasher
                .finalize()
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect();
            assert_eq!(hex, digest, "{seed} {kind} {first} {second}");
        }
    }

    #[test]
    fn gammavariate_refuses_what_cpython_refuses() {
        let mut random = PyRandom::new(1);
        for (alpha, beta) in [
            (0.0, 1.0),
            (1.0, 0.0),
            (-1.0, 1.0),
            (f64::NAN, 1.0),
            (1.0, f64::INFINITY),
        ] {
            assert_eq!(random.gammavariate(alpha, beta), None, "{alpha} {beta}");
        }
    }

    #[test]
    fn shuffle_is_pythons() {
        // python3 -c "import random; r = random.Random(S); x = list(range(10)); r.shuffle(x); print(x)"
        for (seed, expected) in [
            (0, [7, 8, 1, 5, 3, 4, 2, 0, 9, 6]),
            (42, [7, 3, 2, 8, 5, 6, 9, 4, 0, 1]),
            (-7, [8, 3, 1, 4, 7, 0, 9, 6, 2, 5]),
        ] {
            let mut items: Vec<u32> = (0..10).collect();
            PyRandom::new(seed).shuffle(&mut items);
            assert_eq!(items, expected, "seed {seed}");
        }
        // Random(3).shuffle(list(range(100000))): x[:5], x[-3:]
        let mut items: Vec<u32> = (0..100_000).collect();
        PyRandom::new(3).shuffle(&mut items);
        assert_eq!(items[..5], [59877, 99243, 72319, 79314, 76120]);
        assert_eq!(items[items.len() - 3..], [71333, 77678, 31190]);
    }
}
