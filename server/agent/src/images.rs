//! Images into the conversation: the person's (a prompt's image blocks) and a tool's (a `read`
//! of an image file), prepared for the provider's limits, and refused — never dropped — for a
//! model that does not take images.

use std::path::Path;

use tandem_llm::image::{Image, ImageError, Limits};
use tandem_llm::{Part, ProviderSettings};
use tandem_protocol::ContentBlock;

/// The largest image file read for a prompt (it is scaled down before it is sent).
const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;

/// Whether `model` takes images under `provider`'s settings (the model table, or the
/// configuration's `images`).
pub(crate) fn vision(provider: &ProviderSettings, model: &str) -> bool {
    tandem_llm::profile::resolve(provider, model).profile.images
}

/// Why an image cannot go to the model.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImageRefused {
    /// The model does not take images.
    #[error(
        "The prompt has {}, but the model `{model}` does not take images, so it was not sent. Choose a model \
         that does (Claude, GPT-4o or later, Gemini, a local vision model), or, if `{model}` does take images, \
         set `images = true` under [provider] in the configuration.",
        images(*.count)
    )]
    NoVision {
        /// The session's model.
        model: String,
        /// Images in the prompt.
        count: usize,
    },
    /// Neither bytes nor a local file.
    #[error("{name} ({mime_type}) has no data and no file:// uri: send the image's bytes as base64 in `data`")]
    NoData { name: String, mime_type: String },
    /// The file cannot be read.
    #[error("cannot read {name}: {source}")]
    Read { name: String, source: std::io::Error },
    /// Not a regular file.
    #[error("{name} is not a regular file")]
    NotAFile { name: String },
    /// Too large to read.
    #[error("{name} is {megabytes} MB; images of up to 50 MB are taken")]
    TooLarge { name: String, megabytes: u64 },
    /// Not an image, or not one that decodes.
    #[error(transparent)]
    Image(#[from] ImageError),
}

/// "an image", "3 images".
fn images(count: usize) -> String {
    if count == 1 { "an image".to_owned() } else { format!("{count} images") }
}

/// What the model is told instead of the images a tool returned, when it cannot see them.
pub(crate) fn not_shown(model: &str, count: usize) -> String {
    let what = images(count);
    format!(
        "\n\n[The tool returned {what}, which was not shown: the model `{model}` does not take images. Only the \
         description above is available.]"
    )
}

/// The number of image blocks in a prompt.
pub(crate) fn count(blocks: &[ContentBlock]) -> usize {
    blocks.iter().filter(|block| matches!(block, ContentBlock::Image { .. })).count()
}

/// The image an image block carries (its data, or the local file its `uri` names), prepared for
/// `limits`; a message naming the image when it is not one.
pub(crate) fn from_block(
    data: &str,
    mime_type: &str,
    uri: Option<&str>,
    limits: Limits,
) -> Result<Image, ImageRefused> {
    let name = uri.map_or_else(|| "the pasted image".to_owned(), display_name);
    let bytes = if data.is_empty() {
        let Some(path) = uri.and_then(|uri| uri.strip_prefix("file://")) else {
            return Err(ImageRefused::NoData { name, mime_type: mime_type.to_owned() });
        };
        read_file(&percent_decode(path), &name)?
    } else {
        tandem_llm::image::decode_base64(data, &name)?
    };
    let mut image = tandem_llm::image::prepare(&bytes, &name, limits)?;
    image.name = Some(name);
    Ok(image)
}

fn read_file(path: &str, name: &str) -> Result<Vec<u8>, ImageRefused> {
    let path = Path::new(path);
    let read_error = |source| ImageRefused::Read { name: name.to_owned(), source };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if !meta.is_file() {
        return Err(ImageRefused::NotAFile { name: name.to_owned() });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ImageRefused::TooLarge { name: name.to_owned(), megabytes: meta.len() >> 20 });
    }
    let bytes = std::fs::read(path).map_err(read_error)?;
    // Only images are read this way: anything else is refused before its bytes go anywhere.
    if tandem_text::image_media_type(&bytes).is_none() {
        return Err(ImageError::Unsupported(name.to_owned()).into());
    }
    Ok(bytes)
}

/// The file name of a `file://` uri, else the uri.
fn display_name(uri: &str) -> String {
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    let path = percent_decode(path);
    Path::new(&path).file_name().map_or_else(|| uri.to_owned(), |name| name.to_string_lossy().into_owned())
}

/// `%20` and friends in a file uri's path.
fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = path.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Checks a prompt's images before anything runs: every one is an image Tandem can send, and the
/// model takes images. The message says what is wrong and names the model.
pub(crate) fn admit(provider: &ProviderSettings, model: &str, blocks: &[ContentBlock]) -> Result<(), ImageRefused> {
    let count = count(blocks);
    if count == 0 {
        return Ok(());
    }
    if !vision(provider, model) {
        return Err(ImageRefused::NoVision { model: model.to_owned(), count });
    }
    let limits = Limits::of(provider.kind);
    for block in blocks {
        if let ContentBlock::Image { data, mime_type, uri } = block {
            from_block(data, mime_type, uri.as_deref(), limits)?;
        }
    }
    Ok(())
}

/// The images among a tool result's attachments (the protocol's image blocks), prepared for
/// the provider; the ones that are not images are described instead.
pub(crate) fn from_attachments(attachments: &[serde_json::Value], limits: Limits) -> (Vec<Part>, Vec<String>) {
    let mut parts = Vec::new();
    let mut problems = Vec::new();
    for attachment in attachments {
        if let Ok(ContentBlock::Image { data, mime_type, uri }) = serde_json::from_value(attachment.clone()) {
            match from_block(&data, &mime_type, uri.as_deref(), limits) {
                Ok(image) => parts.push(Part::Image(image)),
                Err(problem) => problems.push(problem.to_string()),
            }
        }
    }
    (parts, problems)
}

/// The protocol's block for an image of the conversation (to replay it to the person).
pub(crate) fn block(image: &Image) -> ContentBlock {
    ContentBlock::Image { data: image.data.clone(), mime_type: image.media_type.clone(), uri: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_name_their_file() {
        assert_eq!(display_name("file:///tmp/My%20Shot.png"), "My Shot.png");
        assert_eq!(percent_decode("/a%2Fb%zz"), "/a/b%zz");
    }

    #[test]
    fn a_text_file_is_not_read_as_an_image() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("secret.png");
        std::fs::write(&path, "aws_secret_access_key=SECRET")?;
        let uri = format!("file://{}", path.display());
        let limits = Limits::of(tandem_llm::ProviderKind::Anthropic);
        let err = from_block("", "image/png", Some(&uri), limits);
        let message = err.map(|_| String::new()).unwrap_or_else(|e| e.to_string());
        assert!(message.contains("secret.png") && !message.contains("SECRET"), "{message}");
        Ok(())
    }
}
