//! Content hashes: how staleness is decided (content, never mtime).

use std::fmt;

/// A 64-bit xxh3 hash of a file's bytes (or a document's text). Not cryptographic: it detects
/// change, it does not authenticate.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash(pub u64);

impl ContentHash {
    /// Hash of a byte slice.
    pub fn of(bytes: &[u8]) -> Self {
        Self(xxhash_rust::xxh3::xxh3_64(bytes))
    }

    /// Hash of the concatenation of `parts`, equal to [`ContentHash::of`] on the joined bytes.
    pub fn of_parts(parts: &[&[u8]]) -> Self {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for part in parts {
            hasher.update(part);
        }
        Self(hasher.digest())
    }

    /// Hash of a rope's text, chunk by chunk, equal to [`ContentHash::of`] on its bytes.
    pub fn of_rope(rope: &ropey::Rope) -> Self {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for chunk in rope.chunks() {
            hasher.update(chunk.as_bytes());
        }
        Self(hasher.digest())
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
    use super::*;

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
