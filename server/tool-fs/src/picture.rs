//! `read` of an image (PNG, JPEG, GIF, WebP): its description as text, the image itself as an
//! attachment the agent sends to a model that takes images.

use std::io::Cursor;
use std::path::Path;

use base64::Engine as _;
use tandem_protocol::ContentBlock;
use tandem_text::disk;
use tandem_tool_api::{ToolContext, ToolError, ToolOutput};

/// Image files larger than this are described, not attached.
const MAX_IMAGE_BYTES: u64 = 50 * 1024 * 1024;

/// The `read` of the image at `path`; `None` when the file is not an image after all (it is
/// then read as any other file).
pub(crate) fn read(ctx: &ToolContext, path: &Path) -> Result<Option<ToolOutput>, ToolError> {
    let shown = ctx.workspace.display(path);
    let Some(bytes) = disk::read_bytes(path, MAX_IMAGE_BYTES)? else { return Ok(None) };
    let Some(mime) = tandem_text::image_media_type(&bytes) else { return Ok(None) };
    let format = mime.trim_start_matches("image/").to_ascii_uppercase();
    let dimensions = image::ImageReader::new(Cursor::new(&bytes))
        .with_guessed_format()
        .ok()
        .and_then(|reader| reader.into_dimensions().ok());
    // A damaged image (a cut-short header) is read as any other binary file: refused with its
    // type and size.
    let Some((width, height)) = dimensions else { return Ok(None) };
    let size = super::size(bytes.len() as u64);
    let out = ToolOutput::new(
        format!("Read {shown} ({format} image, {width}×{height})"),
        format!("Image `{shown}`: {format}, {width}×{height} px, {size}. The image itself is attached."),
    )
    .with("path", shown)
    .with("image", true)
    .with("mimeType", mime)
    .with("width", width)
    .with("height", height)
    .with("bytes", bytes.len());
    let uri = format!("file://{}", path.display());
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(Some(out.attach(&ContentBlock::Image { data, mime_type: mime.to_owned(), uri: Some(uri) })))
}
