//! File formats: UTF-8 BOM, line endings, and binary detection.
//!
//! Text is kept exactly as the file has it, minus the BOM, so that editor positions match. The
//! model writes `\n`; [`LineEnding::apply`] turns that into the file's own line ending.

use std::borrow::Cow;

mod utf8;

pub(crate) use utf8::Utf8Check;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
/// How many leading bytes are inspected for a NUL (as git and ripgrep do).
const BINARY_SNIFF: usize = 8000;

/// The line ending a file uses (the majority one, if mixed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LineEnding {
    /// `\n`
    #[default]
    Lf,
    /// `\r\n`
    Crlf,
}

impl LineEnding {
    /// The majority line ending of `text` (LF when there are none).
    pub fn detect(text: &str) -> Self {
        let bytes = text.as_bytes();
        if memchr::memchr(b'\r', bytes).is_none() {
            return Self::Lf;
        }
        let (mut crlf, mut lf) = (0usize, 0usize);
        for i in memchr::memchr_iter(b'\n', bytes) {
            if i > 0 && bytes[i - 1] == b'\r' {
                crlf += 1;
            } else {
                lf += 1;
            }
        }
        if crlf > lf { Self::Crlf } else { Self::Lf }
    }

    /// `text` with every lone `\n` turned into this line ending.
    pub fn apply<'a>(self, text: &'a str) -> Cow<'a, str> {
        match self {
            Self::Lf => Cow::Borrowed(text),
            Self::Crlf => {
                if !text.contains('\n') || LineEnding::detect(text) == Self::Crlf && !has_lone_lf(text) {
                    return Cow::Borrowed(text);
                }
                let mut out = String::with_capacity(text.len() + text.len() / 32);
                let mut prev = '\0';
                for c in text.chars() {
                    if c == '\n' && prev != '\r' {
                        out.push('\r');
                    }
                    out.push(c);
                    prev = c;
                }
                Cow::Owned(out)
            }
        }
    }

    /// The name shown to people and models.
    pub fn name(self) -> &'static str {
        match self {
            Self::Lf => "LF",
            Self::Crlf => "CRLF",
        }
    }
}

fn has_lone_lf(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| *b == b'\n' && (i == 0 || bytes[i - 1] != b'\r'))
}

/// What a text file looks like on disk beyond its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FileFormat {
    /// The file starts with a UTF-8 byte order mark.
    pub bom: bool,
    /// Its line ending.
    pub line_ending: LineEnding,
}

impl FileFormat {
    /// The bytes to write for `text` (which already carries its line endings), in parts:
    /// the BOM if any, then the text, so nothing large is copied.
    pub fn encode(self, text: &str) -> [&[u8]; 2] {
        [if self.bom { UTF8_BOM } else { b"" }, text.as_bytes()]
    }
}

/// The result of decoding a file's bytes.
#[derive(Debug)]
pub enum Decoded {
    /// UTF-8 text, BOM removed.
    Text {
        /// The text, with the file's own line endings.
        text: String,
        /// BOM and line ending.
        format: FileFormat,
    },
    /// Not text we can show or edit.
    Binary {
        /// What it looks like ("PNG image", "non-UTF-8 data", ...).
        kind: &'static str,
    },
}

/// Decodes a file's bytes without copying when it is plain UTF-8.
pub fn decode(bytes: Vec<u8>) -> Decoded {
    decode_checked(bytes, None)
}

/// [`decode`], when the reader already checked the bytes as they came in (`checked`: whether
/// they are UTF-8, from a [`Utf8Check`] fed every one of them): not checked again.
pub(crate) fn decode_checked(mut bytes: Vec<u8>, checked: Option<bool>) -> Decoded {
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Decoded::Binary { kind: "UTF-16 text (convert it to UTF-8 to edit it)" };
    }
    let bom = bytes.starts_with(UTF8_BOM);
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF)];
    if memchr::memchr(0, sniff).is_some() {
        return Decoded::Binary { kind: describe_binary(&bytes) };
    }
    if bom {
        bytes.drain(..UTF8_BOM.len());
    }
    if checked == Some(false) {
        return Decoded::Binary { kind: describe_binary(&bytes) };
    }
    let text = if checked == Some(true) {
        // Tests check it again, so that a fault in the piecewise check shows there.
        debug_assert!(std::str::from_utf8(&bytes).is_ok(), "the piecewise UTF-8 check passed bytes that are not");
        // SAFETY: every byte was fed to a `Utf8Check` in order and it found them UTF-8 (its
        // property test holds it to `str::from_utf8` over any cuts); the BOM taken off the
        // front is one whole character, so what remains is UTF-8 too.
        #[expect(
            unsafe_code,
            reason = "the bytes were checked as they were read; a second pass over a big file costs more than the check itself"
        )]
        unsafe {
            String::from_utf8_unchecked(bytes)
        }
    } else {
        match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => return Decoded::Binary { kind: describe_binary(err.as_bytes()) },
        }
    };
    let head = floor_boundary(&text, 1 << 16);
    let line_ending = LineEnding::detect(&text[..head]);
    Decoded::Text { text, format: FileFormat { bom, line_ending } }
}

fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The media type of PNG, JPEG, GIF or WebP bytes, by their magic numbers (the image formats
/// models take); `None` for anything else.
pub fn image_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// A short description of binary content, from its magic bytes.
pub fn describe_binary(bytes: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "PNG image"),
        (b"\xFF\xD8\xFF", "JPEG image"),
        (b"GIF87a", "GIF image"),
        (b"GIF89a", "GIF image"),
        (b"%PDF-", "PDF document"),
        (b"PK\x03\x04", "ZIP archive (or a format built on it: jar, docx, xlsx)"),
        (b"\x1F\x8B", "gzip archive"),
        (b"\x7FELF", "ELF executable or library"),
        (b"\0asm", "WebAssembly module"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"\x28\xB5\x2F\xFD", "zstd archive"),
        (b"BZh", "bzip2 archive"),
        (b"\xFD7zXZ\0", "xz archive"),
        (b"RIFF", "RIFF media (WAV, AVI or WebP)"),
        (b"\xCA\xFE\xBA\xBE", "Java class or Mach-O universal binary"),
    ];
    MAGIC.iter().find(|(magic, _)| bytes.starts_with(magic)).map_or_else(
        || {
            if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
                "binary data"
            } else {
                "non-UTF-8 data (convert it to UTF-8 to edit it)"
            }
        },
        |(_, kind)| *kind,
    )
}

/// The first `max` characters of `text`, with `…` in place of the rest when there is more.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_and_crlf_round_trip() {
        let bytes = b"\xEF\xBB\xBFa\r\nb\r\n".to_vec();
        let Decoded::Text { text, format } = decode(bytes.clone()) else { panic!("binary") };
        assert_eq!(text, "a\r\nb\r\n");
        assert_eq!(format, FileFormat { bom: true, line_ending: LineEnding::Crlf });
        assert_eq!(format.encode(&text).concat(), bytes);
    }

    #[test]
    fn crlf_apply_converts_only_lone_lf() {
        assert_eq!(LineEnding::Crlf.apply("a\nb\r\nc"), "a\r\nb\r\nc");
        assert_eq!(LineEnding::Crlf.apply("a\r\nb"), "a\r\nb");
        assert_eq!(LineEnding::Lf.apply("a\r\nb\n"), "a\r\nb\n");
    }

    #[test]
    fn binary_is_recognised() {
        assert!(matches!(decode(b"\x89PNG\r\n\x1a\n\0\0".to_vec()), Decoded::Binary { kind: "PNG image" }));
        assert!(matches!(decode(b"ok\xff\xfe".to_vec()), Decoded::Binary { kind } if kind.starts_with("non-UTF-8")));
        assert!(matches!(decode(b"\xFF\xFEa\0".to_vec()), Decoded::Binary { kind } if kind.starts_with("UTF-16")));
        assert!(matches!(decode(Vec::new()), Decoded::Text { .. }));
    }
}
