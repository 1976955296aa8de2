//! Images in a request, checked against the format each provider documents, as the provider
//! itself would refuse a malformed one (HTTP 400):
//!
//! - OpenAI Chat Completions: a `user` message whose `content` is a list of parts, an image
//!   being `{"type": "image_url", "image_url": {"url": "data:<media type>;base64,<data>"}}`;
//!   at most 20 MB of image. No other role carries images.
//! - Anthropic Messages: a `user` message's content block (or a block inside a `tool_result`'s
//!   `content` list) `{"type": "image", "source": {"type": "base64", "media_type": …, "data": …}}`;
//!   at most 5 MB of base64 and 8000 px on the long edge (the edge is checked by the tests,
//!   which decode the image).
//!
//! Media types: `image/png`, `image/jpeg`, `image/gif`, `image/webp`, and the bytes must be
//! that format.

use serde_json::Value;

use crate::turn::Format;

/// One image a request carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentImage {
    /// Its media type.
    pub media_type: String,
    /// Its bytes (base64 decoded).
    pub bytes: Vec<u8>,
    /// Inside a tool result (Anthropic), or right after a text naming a tool call (OpenAI).
    pub in_tool_result: bool,
}

/// What the provider would refuse about a request's images: where in the body, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRefusal(pub String);

impl std::fmt::Display for ImageRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ImageRefusal {}

impl From<String> for ImageRefusal {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<ImageRefusal> for String {
    fn from(refusal: ImageRefusal) -> Self {
        refusal.0
    }
}

const MEDIA_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];
const ANTHROPIC_MAX_BASE64: usize = 5 * 1024 * 1024;
const OPENAI_MAX_BYTES: usize = 20 * 1024 * 1024;

/// The images of a request body in `format`, or what about them the provider would refuse.
pub(crate) fn check(format: Format, body: &Value) -> Result<Vec<SentImage>, ImageRefusal> {
    let mut images = Vec::new();
    let messages = body.get("messages").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        let Some(parts) = message.get("content").and_then(Value::as_array) else { continue };
        match format {
            Format::OpenAi => {
                let mut after_call = false;
                for (j, part) in parts.iter().enumerate() {
                    let at = format!("messages[{i}].content[{j}]");
                    match part.get("type").and_then(Value::as_str) {
                        Some("image_url") => {
                            if role != "user" {
                                return Err(
                                    format!("{at}: image_url is only allowed in user messages, not {role}").into()
                                );
                            }
                            let url = part.pointer("/image_url/url").and_then(Value::as_str).ok_or_else(|| {
                                ImageRefusal::from(format!("{at}: image_url must be an object with a `url` string"))
                            })?;
                            let rest = url
                                .strip_prefix("data:")
                                .ok_or_else(|| ImageRefusal::from(format!("{at}: expected a data: URL")))?;
                            let (media_type, data) = rest.split_once(";base64,").ok_or_else(|| {
                                ImageRefusal::from(format!("{at}: expected `;base64,` in the data URL"))
                            })?;
                            let image = decoded(&at, media_type, data, after_call)?;
                            if image.bytes.len() > OPENAI_MAX_BYTES {
                                return Err(format!("{at}: image over 20 MB").into());
                            }
                            images.push(image);
                            after_call = false;
                        }
                        Some("text") => {
                            after_call =
                                part.get("text").and_then(Value::as_str).is_some_and(|t| t.contains("tool call"));
                        }
                        Some("image") => {
                            return Err(format!("{at}: `image` is Anthropic's block; OpenAI takes image_url").into());
                        }
                        _ => after_call = false,
                    }
                }
            }
            Format::Anthropic => {
                for (j, block) in parts.iter().enumerate() {
                    let at = format!("messages[{i}].content[{j}]");
                    match block.get("type").and_then(Value::as_str) {
                        Some("image") if role == "user" => images.push(anthropic_image(&at, block, false)?),
                        Some("image") => return Err(format!("{at}: images are only allowed in user messages").into()),
                        Some("image_url") => {
                            return Err(
                                format!("{at}: `image_url` is OpenAI's part; Anthropic takes image blocks").into()
                            );
                        }
                        Some("tool_result") => {
                            let inner = block.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                            for (k, inner) in inner.iter().enumerate() {
                                let at = format!("{at}.content[{k}]");
                                match inner.get("type").and_then(Value::as_str) {
                                    Some("image") => images.push(anthropic_image(&at, inner, true)?),
                                    Some("text") if inner.get("text").and_then(Value::as_str) == Some("") => {
                                        return Err(format!("{at}: text content blocks must be non-empty").into());
                                    }
                                    Some("text") => {}
                                    other => {
                                        return Err(format!(
                                            "{at}: a tool_result holds text and image blocks, not {other:?}"
                                        )
                                        .into());
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    Ok(images)
}

fn anthropic_image(at: &str, block: &Value, in_tool_result: bool) -> Result<SentImage, ImageRefusal> {
    let source = block.get("source").ok_or_else(|| ImageRefusal::from(format!("{at}.source: Field required")))?;
    if source.get("type").and_then(Value::as_str) != Some("base64") {
        return Err(format!("{at}.source.type: expected `base64`").into());
    }
    let media_type = source
        .get("media_type")
        .and_then(Value::as_str)
        .ok_or_else(|| ImageRefusal::from(format!("{at}.source.media_type: Field required")))?;
    let data = source
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| ImageRefusal::from(format!("{at}.source.data: Field required")))?;
    if data.len() > ANTHROPIC_MAX_BASE64 {
        return Err(format!(
            "{at}.source.data: image exceeds 5 MB maximum: {} bytes > {ANTHROPIC_MAX_BASE64} bytes",
            data.len()
        )
        .into());
    }
    decoded(&format!("{at}.source"), media_type, data, in_tool_result)
}

fn decoded(at: &str, media_type: &str, data: &str, in_tool_result: bool) -> Result<SentImage, ImageRefusal> {
    if !MEDIA_TYPES.contains(&media_type) {
        return Err(format!("{at}: media type {media_type:?} is not one of {MEDIA_TYPES:?}").into());
    }
    let bytes = base64(data).ok_or_else(|| ImageRefusal::from(format!("{at}: the data is not valid base64")))?;
    let actual = sniff(&bytes);
    if actual != Some(media_type) {
        return Err(format!("{at}: the image was specified as {media_type} but its bytes are {actual:?}").into());
    }
    Ok(SentImage { media_type: media_type.to_owned(), bytes, in_tool_result })
}

/// The provider's own check of what the bytes are, kept apart from Tandem's
/// (`tandem_text::image_media_type`) on purpose: the double does not trust the code it tests.
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    // Each format with the byte runs its files hold, at their offsets (WebP is a RIFF container
    // whose form type is `WEBP`).
    type Run = (usize, &'static [u8]);
    const SIGNATURES: &[(&str, &[Run])] = &[
        ("image/png", &[(0, b"\x89PNG\r\n\x1a\n")]),
        ("image/jpeg", &[(0, &[0xFF, 0xD8, 0xFF])]),
        ("image/gif", &[(0, b"GIF87a")]),
        ("image/gif", &[(0, b"GIF89a")]),
        ("image/webp", &[(0, b"RIFF"), (8, b"WEBP")]),
    ];
    let holds = |&(offset, run): &Run| bytes.get(offset..offset + run.len()) == Some(run);
    SIGNATURES.iter().find(|(_, runs)| runs.iter().all(holds)).map(|(kind, _)| *kind)
}

/// Standard, padded base64; `None` when it is not.
fn base64(data: &str) -> Option<Vec<u8>> {
    let bytes = data.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (n, chunk) in bytes.chunks(4).enumerate() {
        let last = n + 1 == bytes.len() / 4;
        let pad = chunk.iter().rev().take_while(|c| **c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut word = 0u32;
        for &c in &chunk[..4 - pad] {
            word = (word << 6) | value(c)?;
        }
        word <<= 6 * pad as u32;
        let [_, a, b, c] = word.to_be_bytes();
        out.extend_from_slice(&[a, b, c][..3 - pad]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PNG: &str =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn each_format_takes_its_own_shape_only() {
        let openai = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "text": "what is this"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}]}]});
        let seen = check(Format::OpenAi, &openai);
        assert!(seen.as_ref().is_ok_and(|s| s.len() == 1 && s[0].bytes.starts_with(b"\x89PNG")), "{seen:?}");
        assert!(check(Format::Anthropic, &openai).is_err());
        let anthropic = json!({"messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "text", "text": "Image a.png"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}]}]});
        let seen = check(Format::Anthropic, &anthropic);
        assert!(seen.as_ref().is_ok_and(|s| s.len() == 1 && s[0].in_tool_result), "{seen:?}");
        assert!(
            check(
                Format::OpenAi,
                &json!({"messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}]})
            )
            .is_err()
        );
        // A media type the bytes contradict, and bad base64, are refused.
        let lie = json!({"messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG}}]}]});
        assert!(check(Format::Anthropic, &lie).is_err());
        let bad = json!({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR*"}}]}]});
        assert!(check(Format::OpenAi, &bad).is_err());
    }

    #[test]
    fn the_four_formats_are_told_by_their_bytes() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF87a.."), Some("image/gif"));
        assert_eq!(sniff(b"GIF89a.."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(sniff(b"RIFF"), None);
        assert_eq!(sniff(b"\x89PN"), None);
    }
}
