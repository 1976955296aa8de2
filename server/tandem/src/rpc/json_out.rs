//! Writing a JSON value as the transport sends it: byte for byte what `serde_json::to_writer`
//! writes (compact, keys in the map's order), with a faster scan of strings. Tool results are
//! mostly text whose lines end in `\n` and often hold a `\t` (`read`'s `cat -n` numbering), and
//! `serde_json` looks every byte up in a table; here eight bytes are checked at once, and the
//! scan stops only at a byte to escape.

use serde_json::Value;

/// Appends `value` to `out` as compact JSON.
pub(crate) fn write(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Numbers as serde_json writes them (itoa, and floats its own way; never fails on a Vec).
        Value::Number(number) => serde_json::to_writer(&mut *out, number).unwrap_or_default(),
        Value::String(text) => write_str(out, text),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write(out, item);
            }
            out.push(b'}');
        }
    }
}

/// `value` as compact JSON.
pub(crate) fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write(&mut out, value);
    out
}

const ONES: u64 = u64::from_le_bytes([1; 8]);
const HIGH: u64 = u64::from_le_bytes([0x80; 8]);

/// The bytes of `word` (little-endian: the first byte is the lowest) that must be escaped, as
/// their high bits: a control byte (below 0x20), `"` or `\`. The classic bit tricks ("has a byte
/// below n", "has a zero byte") may also flag bytes above a flagged one, never below: the
/// lowest flag is always right, and it is the only one used.
fn escapes(word: u64) -> u64 {
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below_space | (quote.wrapping_sub(ONES) & !quote) | (backslash.wrapping_sub(ONES) & !backslash)) & HIGH
}

/// The escape of `byte` after its `\`: the short forms, or `0` for `\u00XX`; `None` when it
/// needs none.
fn escape_of(byte: u8) -> Option<u8> {
    match byte {
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        b'\n' => Some(b'n'),
        b'\t' => Some(b't'),
        b'\r' => Some(b'r'),
        0x08 => Some(b'b'),
        0x0c => Some(b'f'),
        0x00..=0x1f => Some(0),
        _ => None,
    }
}

/// Appends `text` as a JSON string, escaped as serde_json escapes: `\"`, `\\`, the short forms
/// `\b \f \n \r \t`, and `\u00XX` (lowercase hex) for the other control bytes.
fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    loop {
        // The next byte to escape: eight bytes at a time, then one at a time for the last few.
        let found = loop {
            match bytes.get(i..i + 8) {
                Some(word) => {
                    let flags = escapes(u64::from_le_bytes(word.try_into().unwrap_or_default()));
                    if flags != 0 {
                        break Some(i + flags.trailing_zeros() as usize / 8);
                    }
                    i += 8;
                }
                None => break (i..bytes.len()).find(|&at| escape_of(bytes[at]).is_some()),
            }
        };
        let Some(at) = found else { break };
        let byte = bytes[at];
        out.extend_from_slice(&bytes[run..at]);
        match escape_of(byte) {
            Some(0) => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 15)],
                ]);
            }
            Some(short) => out.extend_from_slice(&[b'\\', short]),
            // Never: a flagged byte is one to escape. Written as it is, it would still be valid.
            None => out.push(byte),
        }
        i = at + 1;
        run = i;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Strings that stress the scan: escapes at every offset of a word, runs of plain bytes
    /// around them, non-ASCII characters, the bytes just outside the escaped ranges.
    fn string() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            prop::sample::select(vec![
                "\"",
                "\\",
                "\n",
                "\t",
                "\r",
                "\u{8}",
                "\u{c}",
                "\u{0}",
                "\u{1f}",
                "\u{1}",
                " ",
                "!",
                "#",
                "[",
                "]",
                "\u{7f}",
                "é",
                "€",
                "𝄞",
                "ab",
                "abcdefgh",
                "0123456789abcdefghij"
            ])
            .prop_map(str::to_owned),
            any::<String>(),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            string().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec((string(), inner), 0..8)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Byte for byte what serde_json writes, for any value.
        #[test]
        fn written_as_serde_json_writes_it(value in value()) {
            let expected = serde_json::to_vec(&value).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let written = to_vec(&value);
            prop_assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&expected));
        }

        /// Each byte value at each offset of a word, among plain bytes: escaped exactly when
        /// serde_json escapes it.
        #[test]
        fn one_byte_anywhere_in_a_word(byte in 0u8..0x80, at in 0usize..24, len in 0usize..24) {
            let mut text = "x".repeat(len.max(at + 1));
            text.replace_range(at..at + 1, std::str::from_utf8(&[byte]).unwrap_or("x"));
            let value = Value::String(text);
            let expected = serde_json::to_vec(&value).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(to_vec(&value), expected);
        }
    }
}
