//! Content hashes: how staleness is decided (content, never mtime).

use std::fmt;
use std::hash::Hasher as _;

/// A 64-bit xxh3 hash of a file's bytes (or a document's text). Not cryptographic: it detects
/// change, it does not authenticate. The values are XXH3-64 with the default seed and secret,
/// whatever computes them: hashes kept by earlier versions (in journals, checkpoints and caches)
/// stay valid. Computed with the widest vector instructions the CPU has, chosen at run time.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(pub u64);

impl ContentHash {
    /// Hash of a byte slice.
    pub fn of(bytes: &[u8]) -> Self {
        Self(twox_hash::XxHash3_64::oneshot(bytes))
    }

    /// Hash of the concatenation of `parts`, equal to [`ContentHash::of`] on the joined bytes.
    pub fn of_parts(parts: &[&[u8]]) -> Self {
        let mut hasher = Hashing::new();
        for part in parts {
            hasher.update(part);
        }
        hasher.finish()
    }

    /// Hash of a rope's text, chunk by chunk, equal to [`ContentHash::of`] on its bytes.
    pub fn of_rope(rope: &ropey::Rope) -> Self {
        let mut hasher = Hashing::new();
        for chunk in rope.chunks() {
            hasher.update(chunk.as_bytes());
        }
        hasher.finish()
    }
}

/// A [`ContentHash`] computed piece by piece, as bytes are read or written.
pub struct Hashing(twox_hash::XxHash3_64);

impl Hashing {
    /// Nothing hashed yet.
    pub fn new() -> Self {
        Self(twox_hash::XxHash3_64::new())
    }

    /// Adds the next piece.
    pub fn update(&mut self, piece: &[u8]) {
        self.0.write(piece);
    }

    /// The hash of every piece added, in order: [`ContentHash::of`] their concatenation.
    pub fn finish(&self) -> ContentHash {
        ContentHash(self.0.finish())
    }
}

impl Default for Hashing {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Whole or in pieces, the hash is XXH3-64 as the reference implementation computes it
        /// (the one earlier versions used): every length class of the algorithm (up to 16, 128
        /// and 240 bytes, then stripes and blocks of 1 KiB) and pieces cut anywhere.
        #[test]
        fn the_hash_is_xxh3_64_whole_or_in_pieces(
            len in prop_oneof![0usize..260, 260usize..5000, 5000usize..70_000],
            seed in any::<u8>(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let bytes: Vec<u8> = (0..len).map(|i| (i.wrapping_mul(167) ^ (i >> 7)) as u8 ^ seed).collect();
            let reference = xxhash_rust::xxh3::xxh3_64(&bytes);
            prop_assert_eq!(ContentHash::of(&bytes).0, reference);
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(len + 1)).collect();
            cuts.sort_unstable();
            let mut hashing = Hashing::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([len]) {
                hashing.update(&bytes[from..cut]);
                from = cut;
            }
            prop_assert_eq!(hashing.finish().0, reference);
        }
    }

    #[test]
    fn rope_hash_equals_byte_hash() {
        let text = "héllo\r\nwörld\n".repeat(5000);
        let rope = ropey::Rope::from_str(&text);
        assert!(rope.chunks().count() > 1);
        assert_eq!(ContentHash::of_rope(&rope), ContentHash::of(text.as_bytes()));
        assert_ne!(ContentHash::of(b"a"), ContentHash::of(b"b"));
        assert_eq!(ContentHash::of_parts(&[b"ab", b"", b"c"]), ContentHash::of(b"abc"));
    }
}
