//! The prefix cache: which leading part of a prompt the simulated server has already computed.
//!
//! Like vLLM's automatic prefix caching, the prompt is cut into fixed-size blocks and each full
//! block is identified by a hash of everything up to and including it, so a block only hits when
//! the whole prefix before it matches too. Blocks live in a least-recently-used set of bounded
//! size. Pure: no clock, no IO.

use std::collections::{BTreeMap, HashMap};

use crate::rng::{fnv1a64, mix64, FNV_OFFSET};

/// A bounded LRU set of prefix-block hashes.
#[derive(Debug, Clone)]
pub struct PrefixCache {
    block_bytes: usize,
    capacity_blocks: usize,
    /// Block hash to the tick it was last used.
    last_used: HashMap<u64, u64>,
    /// Tick to block hash, oldest first, for eviction.
    by_age: BTreeMap<u64, u64>,
    tick: u64,
}

impl PrefixCache {
    /// A cache of at most `capacity_blocks` blocks of `block_bytes` bytes each.
    ///
    /// A capacity or block size of 0 disables caching: every lookup misses.
    pub fn new(block_bytes: usize, capacity_blocks: usize) -> Self {
        Self {
            block_bytes,
            capacity_blocks,
            last_used: HashMap::new(),
            by_age: BTreeMap::new(),
            tick: 0,
        }
    }

    /// Blocks currently cached.
    pub fn len(&self) -> usize {
        self.last_used.len()
    }

    /// The most blocks the cache holds.
    pub fn capacity_blocks(&self) -> usize {
        self.capacity_blocks
    }

    /// Whether no block is cached.
    pub fn is_empty(&self) -> bool {
        self.last_used.is_empty()
    }

    /// Forgets every block.
    pub fn clear(&mut self) {
        self.last_used.clear();
        self.by_age.clear();
    }

    /// Returns how many leading bytes of `prompt` were cached, then caches all its full blocks.
    ///
    /// `namespace` (the model id) keeps different models' caches apart. A trailing partial
    /// block is neither matched nor stored, as in a paged KV cache.
    pub fn lookup_and_insert(&mut self, namespace: &str, prompt: &[u8]) -> usize {
        if self.block_bytes == 0 || self.capacity_blocks == 0 {
            return 0;
        }
        let mut chain = mix64(fnv1a64(FNV_OFFSET, namespace.as_bytes()));
        let mut matched_blocks = 0usize;
        let mut still_matching = true;
        for (index, block) in prompt.chunks_exact(self.block_bytes).enumerate() {
            chain = mix64(chain ^ fnv1a64(FNV_OFFSET, block));
            if still_matching && self.last_used.contains_key(&chain) {
                matched_blocks = index + 1;
            } else {
                still_matching = false;
            }
            self.touch(chain);
        }
        matched_blocks * self.block_bytes
    }

    /// Marks `block` as used now, inserting it and evicting the oldest block if over capacity.
    fn touch(&mut self, block: u64) {
        self.tick += 1;
        if let Some(previous) = self.last_used.insert(block, self.tick) {
            self.by_age.remove(&previous);
        }
        self.by_age.insert(self.tick, block);
        while self.last_used.len() > self.capacity_blocks {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.last_used.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| b'a' + ((i as u8) ^ seed) % 26).collect()
    }

    #[test]
    fn a_shared_prefix_hits_and_a_unique_one_misses() {
        let mut cache = PrefixCache::new(256, 1_000);
        let shared = text(1_000, 1);
        let mut first = shared.clone();
        first.extend(text(500, 2));
        let mut second = shared.clone();
        second.extend(text(500, 3));

        assert_eq!(cache.lookup_and_insert("m", &first), 0, "cold cache");
        // 1000 shared bytes hold three full 256-byte blocks; the fourth differs.
        assert_eq!(cache.lookup_and_insert("m", &second), 768);
        // A prompt seen before hits in every full block.
        assert_eq!(cache.lookup_and_insert("m", &first), 1_280);
        // Another model shares nothing.
        assert_eq!(cache.lookup_and_insert("other", &first), 0);
    }

    #[test]
    fn a_differing_first_block_misses_everything_after_it() {
        let mut cache = PrefixCache::new(4, 100);
        cache.lookup_and_insert("m", b"AAAABBBBCCCC");
        // Same later blocks, different first block: chained hashes never match.
        assert_eq!(cache.lookup_and_insert("m", b"ZZZZBBBBCCCC"), 0);
        assert_eq!(cache.lookup_and_insert("m", b"AAAABBBBXXXX"), 8);
        assert_eq!(
            cache.lookup_and_insert("m", b"AAAABBB"),
            4,
            "partial block ignored"
        );
    }

    #[test]
    fn the_least_recently_used_blocks_are_evicted_at_capacity() {
        let mut cache = PrefixCache::new(4, 2);
        cache.lookup_and_insert("m", b"AAAABBBB");
        assert_eq!(cache.len(), 2);
        cache.lookup_and_insert("m", b"CCCC");
        assert_eq!(cache.len(), 2);
        // "AAAA" was the oldest block and is gone, so the chain misses from the start.
        assert_eq!(cache.lookup_and_insert("m", b"AAAABBBB"), 0);
        cache.clear();
        assert!(cache.is_empty());
    }

    #[test]
    fn a_zero_capacity_cache_never_hits() {
        let mut cache = PrefixCache::new(4, 0);
        cache.lookup_and_insert("m", b"AAAABBBB");
        assert_eq!(cache.lookup_and_insert("m", b"AAAABBBB"), 0);
        assert!(cache.is_empty());
    }
}
