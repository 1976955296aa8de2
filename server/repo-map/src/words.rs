//! Words of identifiers and paths: `parseHTTPRequest`, `parse_http_request` and
//! `parse-http-request.rs` all say "parse http request".

/// The words of `text`: split at anything that is not a letter or digit, and inside a word at
/// each lowercase-to-uppercase step and before the last capital of a run followed by a
/// lowercase letter (`HTTPRequest` → `HTTP`, `Request`). Cased as written.
pub fn split(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in text.split(|c: char| !c.is_alphanumeric()) {
        if part.is_empty() {
            continue;
        }
        let chars: Vec<(usize, char)> = part.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let prev = chars[i - 1].1;
            let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
            let boundary = ((prev.is_lowercase() || prev.is_ascii_digit()) && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_lower);
            if boundary {
                out.push(&part[start..at]);
                start = at;
            }
        }
        out.push(&part[start..]);
    }
    out
}

/// [`split`], joined by spaces and lowercased: what a ranking document holds for `text`.
pub fn spaced(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for word in split(text) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn identifiers_split_into_their_words() {
        assert_eq!(split("parseHTTPRequest"), ["parse", "HTTP", "Request"]);
        assert_eq!(split("parse_http_request"), ["parse", "http", "request"]);
        assert_eq!(split("server/tool-fs/src/lib.rs"), ["server", "tool", "fs", "src", "lib", "rs"]);
        assert_eq!(split("BufferCache::record_read"), ["Buffer", "Cache", "record", "read"]);
        assert_eq!(split("utf8ToUtf16"), ["utf8", "To", "Utf16"]);
        assert_eq!(spaced("MAX_FILE_BYTES"), "max file bytes");
    }

    proptest! {
        #[test]
        fn words_are_pieces_of_the_text_in_order(text in "[a-zA-Z0-9_ ./-]{0,40}") {
            let words = split(&text);
            let letters: String = text.chars().filter(|c| c.is_alphanumeric()).collect();
            prop_assert_eq!(words.concat(), letters);
            prop_assert!(words.iter().all(|w| !w.is_empty()));
        }
    }
}
