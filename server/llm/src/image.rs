//! Images in the conversation: what one is ([`Image`]), how it is made to fit a provider's
//! limits ([`prepare`]: PNG, JPEG, GIF or WebP in; the same bytes when they fit, else resized
//! and encoded again), and what it costs in tokens ([`tokens`]).
//!
//! The limits are the providers' documented ones ([`Limits::of`]): Anthropic takes images of at
//! most 5 MB (of base64) and 8000 px on the long edge, and recommends 1568 px at most (larger
//! ones are scaled down on its side, costing time and nothing else); OpenAI takes up to 20 MB
//! and scales high-detail images to fit 2048 × 2048. An image is prepared once, when it enters
//! the conversation, so the session file stores what the provider gets.

use std::io::Cursor;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::ProviderKind;

/// An image in the conversation, ready to send: its encoded bytes as base64.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The encoded bytes, base64 (standard alphabet, padded).
    pub data: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Where it came from (a file name, "pasted image"), for notes about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Image {
    /// The data URL OpenAI-compatible providers take (`data:image/png;base64,…`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// Size of the encoded image in bytes (not of its base64).
    pub fn byte_len(&self) -> usize {
        self.data.len() / 4 * 3 - self.data.bytes().rev().take_while(|b| *b == b'=').count()
    }

    /// One line describing it: name, format, dimensions and size.
    pub fn describe(&self) -> String {
        let format = self.media_type.strip_prefix("image/").unwrap_or(&self.media_type).to_ascii_uppercase();
        let name = self.name.as_deref().map(|n| format!("{n}: ")).unwrap_or_default();
        format!("{name}{format} image, {}×{} px, {}", self.width, self.height, kib(self.byte_len()))
    }
}

fn kib(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// What a provider takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest edge in pixels.
    pub max_edge: u32,
    /// Encoded bytes (before base64).
    pub max_bytes: usize,
}

impl Limits {
    /// The limits of `kind`'s provider, as Tandem prepares images for it: Anthropic's
    /// recommended edge (1568 px) and 5 MB of base64; OpenAI's 2048 px (what high detail scales
    /// to) and 20 MB.
    pub const fn of(kind: ProviderKind) -> Self {
        match kind {
            ProviderKind::Anthropic => Self { max_edge: 1_568, max_bytes: 5_000_000 / 4 * 3 },
            ProviderKind::OpenAi => Self { max_edge: 2_048, max_bytes: 20_000_000 / 4 * 3 },
        }
    }
}

/// Why an image cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Not PNG, JPEG, GIF or WebP.
    #[error("{0} is not an image Tandem can send (PNG, JPEG, GIF or WebP); convert it to PNG first")]
    Unsupported(String),
    /// The bytes say one format but do not decode.
    #[error("{what} could not be decoded as {format}: {reason}")]
    Decode {
        /// What was being read (a file name, "the pasted image").
        what: String,
        /// The format its bytes claim.
        format: &'static str,
        /// The decoder's reason.
        reason: String,
    },
    /// The base64 of an image is not base64.
    #[error("{0} is not valid base64 image data")]
    Base64(String),
}

fn format_of(media_type: &str) -> Option<image::ImageFormat> {
    Some(match media_type {
        "image/png" => image::ImageFormat::Png,
        "image/jpeg" => image::ImageFormat::Jpeg,
        "image/gif" => image::ImageFormat::Gif,
        "image/webp" => image::ImageFormat::WebP,
        _ => return None,
    })
}

/// Decodes base64 image data (as editors and ACP clients send it; a `data:` URL prefix is taken
/// off).
pub fn decode_base64(data: &str, what: &str) -> Result<Vec<u8>, ImageError> {
    let data = data.split_once(";base64,").map_or(data, |(_, rest)| rest);
    let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    STANDARD.decode(clean).map_err(|_| ImageError::Base64(what.to_owned()))
}

/// The width and height of an image of `width` × `height` scaled down so its long edge is at
/// most `max_edge`, the aspect ratio kept (to the pixel); unchanged when it fits.
pub fn fit_dimensions(width: u32, height: u32, max_edge: u32) -> (u32, u32) {
    let max_edge = max_edge.max(1);
    let long = width.max(height);
    if long <= max_edge {
        return (width.max(1), height.max(1));
    }
    let scale = |side: u32| ((u64::from(side) * u64::from(max_edge) + u64::from(long) / 2) / u64::from(long)) as u32;
    (scale(width).clamp(1, max_edge), scale(height).clamp(1, max_edge))
}

/// The image `bytes` (named `what` in messages) as it goes to a provider with `limits`: the
/// same bytes when the format is one providers take and it fits, else scaled down (aspect ratio
/// kept) and encoded again — PNG for images with transparency or few colours when that fits,
/// JPEG otherwise — smaller each round until it fits.
pub fn prepare(bytes: &[u8], what: &str, limits: Limits) -> Result<Image, ImageError> {
    let media_type = tandem_text::image_media_type(bytes).ok_or_else(|| ImageError::Unsupported(what.to_owned()))?;
    let format = format_of(media_type).ok_or_else(|| ImageError::Unsupported(what.to_owned()))?;
    let decode_error = |err: image::ImageError| ImageError::Decode {
        what: what.to_owned(),
        format: format.extensions_str().first().copied().unwrap_or("image"),
        reason: err.to_string(),
    };
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    let mut guard = image::Limits::default();
    // A small file claiming a huge picture (a decompression bomb) is refused, not decoded.
    guard.max_image_width = Some(30_000);
    guard.max_image_height = Some(30_000);
    guard.max_alloc = Some(1 << 30);
    reader.limits(guard.clone());
    let (width, height) = reader.into_dimensions().map_err(decode_error)?;
    let name = Some(what.to_owned());
    if width.max(height) <= limits.max_edge && bytes.len() <= limits.max_bytes {
        return Ok(Image { media_type: media_type.to_owned(), data: STANDARD.encode(bytes), width, height, name });
    }
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(guard);
    let decoded = reader.decode().map_err(decode_error)?;
    let transparent = decoded.color().has_alpha();
    let mut edge = limits.max_edge;
    loop {
        let (w, h) = fit_dimensions(width, height, edge);
        let scaled = if (w, h) == (width, height) {
            decoded.clone()
        } else {
            decoded.resize_exact(w, h, image::imageops::FilterType::Triangle)
        };
        let mut encoded = Vec::new();
        let mut media_type = "image/png";
        if transparent || media_type_of(format) == "image/png" {
            let _ = scaled.write_to(&mut Cursor::new(&mut encoded), image::ImageFormat::Png);
        }
        if encoded.is_empty() || (encoded.len() > limits.max_bytes && !transparent) {
            encoded.clear();
            media_type = "image/jpeg";
            let rgb = image::DynamicImage::ImageRgb8(scaled.to_rgb8());
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut encoded, 85);
            rgb.write_with_encoder(encoder).map_err(decode_error)?;
        }
        if encoded.len() <= limits.max_bytes || edge <= 16 {
            return Ok(Image {
                media_type: media_type.to_owned(),
                data: STANDARD.encode(&encoded),
                width: w,
                height: h,
                name,
            });
        }
        edge = (edge * 3 / 4).max(16);
    }
}

fn media_type_of(format: image::ImageFormat) -> &'static str {
    format.to_mime_type()
}

/// Tokens one image of `width` × `height` costs, as each provider documents it: Anthropic about
/// `width × height / 750` (after its own scaling to 1568 px and about 1.15 megapixels);
/// OpenAI 85 plus 170 per 512-px tile of the image scaled to fit 2048 × 2048 and then to 768 px
/// on the short side.
pub fn tokens(kind: ProviderKind, width: u32, height: u32) -> u64 {
    match kind {
        ProviderKind::Anthropic => {
            let (w, h) = fit_dimensions(width, height, 1_568);
            let pixels = (u64::from(w) * u64::from(h)).min(1_150_000);
            pixels.div_ceil(750).max(1)
        }
        ProviderKind::OpenAi => {
            let (w, h) = fit_dimensions(width, height, 2_048);
            let short = w.min(h);
            let (w, h) = if short > 768 {
                let scale = |side: u32| (u64::from(side) * 768).div_ceil(u64::from(short)) as u32;
                (scale(w), scale(h))
            } else {
                (w, h)
            };
            85 + 170 * u64::from(w.div_ceil(512)) * u64::from(h.div_ceil(512))
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn png(width: u32, height: u32, noisy: bool) -> Vec<u8> {
        let mut seed = 0x2545_f491_u32;
        let picture = image::RgbImage::from_fn(width, height, |x, y| {
            if noisy {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let [a, b, c, _] = seed.to_le_bytes();
                image::Rgb([a, b, c])
            } else {
                image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
            }
        });
        let mut out = Vec::new();
        let written =
            image::DynamicImage::ImageRgb8(picture).write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png);
        assert!(written.is_ok());
        out
    }

    /// Whether `(w, h)` keeps the aspect ratio of `(width, height)`: the short side within a
    /// pixel of the exact one.
    fn keeps_ratio(width: u32, height: u32, w: u32, h: u32) -> bool {
        let exact_h = f64::from(w) * f64::from(height) / f64::from(width);
        let exact_w = f64::from(h) * f64::from(width) / f64::from(height);
        if width >= height { (f64::from(h) - exact_h).abs() <= 1.0 } else { (f64::from(w) - exact_w).abs() <= 1.0 }
    }

    proptest! {
        #[test]
        fn fitted_dimensions_are_within_the_edge_and_keep_the_ratio(width in 1u32..40_000, height in 1u32..40_000, edge in 1u32..10_000) {
            let (w, h) = fit_dimensions(width, height, edge);
            prop_assert!(w.max(h) <= edge.max(width.max(height).min(edge)));
            prop_assert!(w >= 1 && h >= 1);
            if width.max(height) <= edge {
                prop_assert_eq!((w, h), (width, height));
            } else {
                prop_assert_eq!(w.max(h), edge);
                prop_assert!(keeps_ratio(width, height, w, h), "{}x{} -> {}x{}", width, height, w, h);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
        #[test]
        fn prepared_images_fit_the_limits_and_keep_the_ratio(
            width in 1u32..1_400,
            height in 1u32..1_400,
            edge in 8u32..700,
            noisy in any::<bool>(),
            kib in 4usize..400,
        ) {
            let limits = Limits { max_edge: edge, max_bytes: kib * 1024 };
            let image = prepare(&png(width, height, noisy), "shot.png", limits);
            prop_assert!(image.is_ok(), "{image:?}");
            let Ok(image) = image else { return Ok(()) };
            let bytes = decode_base64(&image.data, "out");
            prop_assert!(bytes.is_ok());
            let Ok(bytes) = bytes else { return Ok(()) };
            prop_assert_eq!(bytes.len(), image.byte_len());
            // What the header says is what the image is.
            let real = image::load_from_memory(&bytes).map(|i| (i.width(), i.height()));
            prop_assert_eq!(real.ok(), Some((image.width, image.height)));
            prop_assert_eq!(tandem_text::image_media_type(&bytes), Some(image.media_type.as_str()));
            prop_assert!(image.width.max(image.height) <= edge, "{}x{} -> {}x{}", width, height, image.width, image.height);
            prop_assert!(bytes.len() <= limits.max_bytes || image.width.max(image.height) <= 16, "{} > {}", bytes.len(), limits.max_bytes);
            prop_assert!(keeps_ratio(width, height, image.width, image.height), "{}x{} -> {}x{}", width, height, image.width, image.height);
        }
    }

    #[test]
    fn an_image_within_the_limits_is_sent_as_it_is() {
        let bytes = png(40, 30, false);
        let image = prepare(&bytes, "a.png", Limits::of(ProviderKind::Anthropic));
        assert_eq!(image.map(|i| (i.data, i.width, i.height)), Ok((STANDARD.encode(&bytes), 40, 30)));
    }

    #[test]
    fn a_large_screenshot_is_scaled_to_each_providers_limits() {
        let bytes = png(3_000, 1_000, false);
        for kind in [ProviderKind::Anthropic, ProviderKind::OpenAi] {
            let limits = Limits::of(kind);
            let image = prepare(&bytes, "wide.png", limits);
            assert_eq!(image.map(|i| (i.width, i.height)), Ok(fit_dimensions(3_000, 1_000, limits.max_edge)));
        }
    }

    #[test]
    fn not_an_image_is_refused_by_name() {
        let err = prepare(b"%PDF-1.7", "doc.pdf", Limits::of(ProviderKind::OpenAi));
        assert!(matches!(&err, Err(ImageError::Unsupported(what)) if what == "doc.pdf"), "{err:?}");
        let broken = prepare(b"\x89PNG\r\n\x1a\nbroken", "bad.png", Limits::of(ProviderKind::OpenAi));
        assert!(matches!(broken, Err(ImageError::Decode { .. })));
    }

    #[test]
    fn token_estimates_follow_the_providers_documents() {
        // Anthropic: 1000 × 1000 → 1334 tokens; OpenAI: 1024 × 1024 → 768 × 768 → 4 tiles → 765.
        assert_eq!(tokens(ProviderKind::Anthropic, 1_000, 1_000), 1_334);
        assert_eq!(tokens(ProviderKind::OpenAi, 1_024, 1_024), 765);
        // OpenAI's example: 2048 × 4096 → 1024 × 2048 → 768 × 1536 → 6 tiles → 1105.
        assert_eq!(tokens(ProviderKind::OpenAi, 2_048, 4_096), 1_105);
        assert_eq!(tokens(ProviderKind::OpenAi, 100, 100), 255);
        // Anthropic caps what one image costs (about 1600 tokens).
        assert!(tokens(ProviderKind::Anthropic, 8_000, 8_000) <= 1_600);
    }
}
