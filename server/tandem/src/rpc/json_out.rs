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
        Value::Array(items) => write_array(out, items),
        Value::Object(map) => write_map(out, map),
    }
}

fn write_array(out: &mut Vec<u8>, items: &[Value]) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

fn write_map(out: &mut Vec<u8>, map: &serde_json::Map<String, Value>) {
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

/// What the connection can write as a message's result: written straight into the frame, never
/// first built into a `Value` tree (which a `json!` envelope would copy whole, and drop twice).
pub trait WriteJson {
    /// Appends `self` as compact JSON, byte for byte what `serde_json::to_writer` writes for
    /// it.
    fn write_json(&self, out: &mut Vec<u8>);

    /// About how many bytes [`Self::write_json`] appends, so that the frame is allocated once
    /// at about its size instead of grown (and copied) several times on the way.
    fn size_hint(&self) -> usize {
        0
    }
}

impl WriteJson for Value {
    fn write_json(&self, out: &mut Vec<u8>) {
        write(out, self);
    }
}

/// A tool's result, as serializing it gives (its fields in the sorted order a `serde_json` map
/// has).
impl WriteJson for tandem_protocol::ToolResult {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"attachments\":");
        write_array(out, &self.attachments);
        out.extend_from_slice(b",\"error\":");
        match &self.error {
            Some(error) => write_str(out, error),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"metadata\":");
        write_map(out, &self.metadata);
        out.extend_from_slice(b",\"output\":");
        write_str(out, &self.output);
        out.extend_from_slice(b",\"title\":");
        write_str(out, &self.title);
        out.push(b'}');
    }

    /// The texts, with room for an escape per line of them, and for the metadata.
    fn size_hint(&self) -> usize {
        let text = self.output.len() + self.title.len() + self.error.as_ref().map_or(0, String::len);
        text + text / 8 + 512
    }
}

/// The members of a JSON-RPC message besides `"jsonrpc": "2.0"`.
pub(crate) enum Envelope<'a> {
    Request { id: u64, method: &'a str, params: &'a Value },
    Notification { method: &'a str, params: &'a Value },
    Response { id: &'a Value, result: &'a dyn WriteJson },
    Error { id: &'a Value, code: i64, message: &'a str, data: Option<&'a Value> },
}

impl Envelope<'_> {
    /// About how many bytes [`write_envelope`] appends for this message.
    pub(crate) fn size_hint(&self) -> usize {
        match self {
            Self::Response { result, .. } => 64 + result.size_hint(),
            _ => 256,
        }
    }
}

/// Appends the message `envelope` describes, as `serde_json` writes the same message built with
/// `json!` (members in a map's sorted order: `error`, `id`, `jsonrpc`, `method`, `params`,
/// `result`).
pub(crate) fn write_envelope(out: &mut Vec<u8>, envelope: &Envelope<'_>) {
    out.push(b'{');
    if let Envelope::Error { code, message, data, .. } = envelope {
        out.extend_from_slice(b"\"error\":{\"code\":");
        out.extend_from_slice(itoa::Buffer::new().format(*code).as_bytes());
        if let Some(data) = data {
            out.extend_from_slice(b",\"data\":");
            write(out, data);
        }
        out.extend_from_slice(b",\"message\":");
        write_str(out, message);
        out.extend_from_slice(b"},");
    }
    match envelope {
        Envelope::Request { id, .. } => {
            out.extend_from_slice(b"\"id\":");
            out.extend_from_slice(itoa::Buffer::new().format(*id).as_bytes());
            out.push(b',');
        }
        Envelope::Response { id, .. } | Envelope::Error { id, .. } => {
            out.extend_from_slice(b"\"id\":");
            write(out, id);
            out.push(b',');
        }
        Envelope::Notification { .. } => {}
    }
    out.extend_from_slice(b"\"jsonrpc\":\"2.0\"");
    match envelope {
        Envelope::Request { method, params, .. } | Envelope::Notification { method, params } => {
            out.extend_from_slice(b",\"method\":");
            write_str(out, method);
            out.extend_from_slice(b",\"params\":");
            write(out, params);
        }
        Envelope::Response { result, .. } => {
            out.extend_from_slice(b",\"result\":");
            result.write_json(out);
        }
        Envelope::Error { .. } => {}
    }
    out.push(b'}');
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
    use serde_json::json;

    fn to_vec(value: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, value);
        out
    }

    fn envelope_bytes(envelope: &Envelope<'_>) -> String {
        let mut out = Vec::new();
        write_envelope(&mut out, envelope);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn serde_bytes(value: &Value) -> Result<String, TestCaseError> {
        let bytes = serde_json::to_vec(value).map_err(|e| TestCaseError::fail(e.to_string()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn id() -> impl Strategy<Value = Value> {
        prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            string().prop_map(Value::String),
            Just(Value::Null)
        ]
    }

    fn tool_result() -> impl Strategy<Value = tandem_protocol::ToolResult> {
        let metadata =
            prop::collection::vec((string(), value()), 0..6).prop_map(|entries| entries.into_iter().collect());
        (string(), string(), metadata, prop::option::of(string()), prop::collection::vec(value(), 0..3)).prop_map(
            |(title, output, metadata, error, attachments)| tandem_protocol::ToolResult {
                title,
                output,
                metadata,
                error,
                attachments,
            },
        )
    }

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

        /// Every message the connection writes is byte for byte the message `json!` builds
        /// and serde_json writes: requests, notifications, results and errors (with and
        /// without data), whatever their ids, methods and values.
        #[test]
        fn envelopes_are_written_as_serde_json_writes_the_messages(
            number in any::<u64>(),
            id in id(),
            method in string(),
            params in value(),
            code in any::<i64>(),
            message in string(),
            data in prop::option::of(value()),
        ) {
            prop_assert_eq!(
                envelope_bytes(&Envelope::Request { id: number, method: &method, params: &params }),
                serde_bytes(&json!({ "jsonrpc": "2.0", "id": number, "method": method, "params": params }))?
            );
            prop_assert_eq!(
                envelope_bytes(&Envelope::Notification { method: &method, params: &params }),
                serde_bytes(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))?
            );
            prop_assert_eq!(
                envelope_bytes(&Envelope::Response { id: &id, result: &params }),
                serde_bytes(&json!({ "jsonrpc": "2.0", "id": id, "result": params }))?
            );
            let mut error = json!({ "code": code, "message": message });
            if let Some(data) = &data {
                error["data"] = data.clone();
            }
            prop_assert_eq!(
                envelope_bytes(&Envelope::Error { id: &id, code, message: &message, data: data.as_ref() }),
                serde_bytes(&json!({ "jsonrpc": "2.0", "id": id, "error": error }))?
            );
        }

        /// A tool's result is written as the `Value` it converts to would be.
        #[test]
        fn a_tool_result_is_written_as_its_value_would_be(result in tool_result()) {
            let mut written = Vec::new();
            result.write_json(&mut written);
            let expected = serde_bytes(&Value::from(result))?;
            prop_assert_eq!(String::from_utf8_lossy(&written), expected);
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
