//! A deterministic generator for synthetic runs (xorshift64*), shared by the golden tests and
//! the load benchmark so both build their artifacts the same reproducible way.

/// xorshift64* state; seed it with any nonzero value.
pub struct Noise(pub u64);

impl Noise {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [low, high).
    pub fn between(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1_u64 << 53) as f64;
        low + (high - low) * unit
    }
}
