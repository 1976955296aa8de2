//! Writing a command's answer to stdout (the crate forbids `println!`: stdout carries protocol
//! messages in the serving commands, so every write to it is deliberate). A closed stdout (a
//! pipe whose reader left) is not an error worth a panic: the text is dropped.

use std::io::Write as _;

/// Writes `text` and a newline.
pub fn line(text: &str) {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).ok();
    stdout.write_all(b"\n").ok();
    stdout.flush().ok();
}

/// Writes `text` as it is.
pub fn text(text: &str) {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).ok();
    stdout.flush().ok();
}

/// A list command's answer: `items` as one JSON array with `json`, else a line each as `line`
/// writes it, or `empty` when there are none.
pub fn listing<T: serde::Serialize>(
    items: &[T],
    json: bool,
    empty: &str,
    line: impl Fn(&T) -> String,
) -> serde_json::Result<()> {
    if json {
        self::line(&serde_json::to_string(items)?);
    } else if items.is_empty() {
        self::line(empty);
    } else {
        for item in items {
            self::line(&line(item));
        }
    }
    Ok(())
}
