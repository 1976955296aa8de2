//! UTF-8 checked piece by piece, as a file is read: each piece is checked while it is still in
//! the CPU's cache, instead of a second pass over the whole text once it is in memory.

/// Whether the bytes fed so far, taken as one text, are UTF-8. A character split across pieces
/// is held back (at most three bytes) and checked when its last byte arrives.
#[derive(Debug, Default)]
pub(crate) struct Utf8Check {
    /// The start of a character the last piece ended inside.
    partial: [u8; 4],
    partial_len: usize,
    failed: bool,
}

impl Utf8Check {
    /// Checks the next piece.
    pub(crate) fn feed(&mut self, mut piece: &[u8]) {
        if self.failed {
            return;
        }
        if self.partial_len > 0 {
            let width = width(self.partial[0]);
            let take = (width - self.partial_len).min(piece.len());
            self.partial[self.partial_len..self.partial_len + take].copy_from_slice(&piece[..take]);
            self.partial_len += take;
            piece = &piece[take..];
            if self.partial_len < width {
                // The piece ended before the character did: checked when it is whole.
                return;
            }
            if std::str::from_utf8(&self.partial[..width]).is_err() {
                self.failed = true;
                return;
            }
            self.partial_len = 0;
        }
        match std::str::from_utf8(piece) {
            Ok(_) => {}
            // Cut short inside a character (the bytes so far can start one): held back.
            Err(err) if err.error_len().is_none() => {
                let rest = &piece[err.valid_up_to()..];
                self.partial[..rest.len()].copy_from_slice(rest);
                self.partial_len = rest.len();
            }
            Err(_) => self.failed = true,
        }
    }

    /// Whether everything fed is UTF-8: nothing invalid, and no character left unfinished.
    pub(crate) fn is_utf8(&self) -> bool {
        !self.failed && self.partial_len == 0
    }
}

/// The length of the character a (valid) leading byte starts.
fn width(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Text with characters of every width, sometimes broken: a byte changed, dropped or added
    /// anywhere (inside a character too).
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        let text = proptest::collection::vec(
            prop_oneof![
                Just("a".to_owned()),
                Just("\n".to_owned()),
                Just("é".to_owned()),
                Just("€".to_owned()),
                Just("𝄞".to_owned()),
                any::<char>().prop_map(String::from),
            ],
            0..60,
        )
        .prop_map(|chars| chars.concat().into_bytes());
        (text, proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 0..3)).prop_map(
            |(mut bytes, breaks)| {
                for (at, byte, how) in breaks {
                    let i = at.index(bytes.len() + 1);
                    match how {
                        0 if i < bytes.len() => bytes[i] = byte,
                        1 if i < bytes.len() => {
                            bytes.remove(i);
                        }
                        _ => bytes.insert(i, byte),
                    }
                }
                bytes
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Cut into pieces anywhere (inside characters too, pieces of one byte and empty
        /// ones), the bytes are found UTF-8 exactly when the standard library says they are.
        #[test]
        fn pieces_are_utf8_exactly_when_the_whole_is(
            bytes in bytes(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut check = Utf8Check::default();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                check.feed(&bytes[from..cut]);
                from = cut;
            }
            prop_assert_eq!(check.is_utf8(), std::str::from_utf8(&bytes).is_ok(), "{:x?}", bytes);
        }
    }
}
