//! Typographic punctuation to ASCII, as models often write it the other way round (curly
//! quotes, dashes, odd spaces, the ellipsis). Used where text is compared ignoring formatting:
//! the fuzzy matcher's keys and the patch locator's tolerant passes.

use std::borrow::Cow;

/// `line` with typographic quotes, dashes, spaces and ellipses as ASCII; borrowed when it is
/// ASCII already.
pub(crate) fn ascii_only(line: &str) -> Cow<'_, str> {
    if line.is_ascii() {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => out.push('-'),
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => out.push('"'),
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => out.push(' '),
            '\u{2026}' => out.push_str("..."),
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}
