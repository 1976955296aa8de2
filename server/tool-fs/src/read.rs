//! `read`: a file's lines in `cat -n` style, the editor's unsaved text when it is open.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{Loaded, Origin, blocking, blocking_sized, load_seen, load_shown, remember};

const DEFAULT_LIMIT: usize = 2000;
/// Lines longer than this many chars are cut.
pub(crate) const MAX_LINE_CHARS: usize = 2000;
/// Output beyond this many bytes is cut at a line boundary, with the offset to continue from.
const MAX_OUTPUT_BYTES: usize = 128 * 1024;

const DESCRIPTION: &str = "Read a file. Output is `cat -n` style: each line prefixed by its 1-based number and a tab \
    (not part of the file). Up to 2000 lines by default; use offset and limit for long files. \
    Lines over 2000 characters are cut. Shows the editor's unsaved text when the file is open \
    there. Images (PNG, JPEG, GIF, WebP) come back as images to a model that takes them. Other \
    binary files are refused with their type and size.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Path of the file: absolute, or relative to the working directory.
    file_path: String,
    /// 1-based line to start at (default 1).
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    /// Number of lines to read (default 2000).
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

/// The number of lines as `str::lines` counts them, with memchr.
pub(crate) fn count_lines(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    if text.is_empty() || text.ends_with('\n') { newlines } else { newlines + 1 }
}

/// `line` cut to [`MAX_LINE_CHARS`] chars, and whether it was cut.
pub(crate) fn cut_line(line: &str) -> (std::borrow::Cow<'_, str>, bool) {
    cut_line_at(line, MAX_LINE_CHARS)
}

/// `line` cut to `max` chars with a marker giving its length, and whether it was cut. Public for
/// the search and `lsp` tools, which cut lines at their own lengths.
pub fn cut_line_at(line: &str, max: usize) -> (std::borrow::Cow<'_, str>, bool) {
    if line.len() <= max {
        // At most that many bytes, so at most that many chars.
        return (line.into(), false);
    }
    match line.char_indices().nth(max) {
        None => (line.into(), false),
        Some((at, _)) => {
            let total = line.chars().count();
            (format!("{}… [line cut: {total} chars]", &line[..at]).into(), true)
        }
    }
}

tool!(pub(crate) Read(Args) = Decl::new("read", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["read_file", "view", "cat"])
    .keywords(&["open", "show", "file", "contents", "lines"])
    .always_load());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    if is_image_name(&args.file_path) {
        let path = ctx.workspace.resolve(&args.file_path, &ctx.working_dir)?;
        let image_ctx = ctx.clone();
        let found = blocking(move || crate::picture::read(&image_ctx, &path)).await?;
        if let Some(out) = found {
            return Ok(out);
        }
    }
    if ctx.editor.as_ref().is_some_and(|editor| editor.reads_files()) {
        // The editor serves the text (unsaved changes included): ask it, then render.
        let path = ctx.workspace.resolve(&args.file_path, &ctx.working_dir)?;
        let loaded = load_shown(&ctx, &path).await?;
        return blocking_sized(loaded.text.len() as u64, move || render(args, &ctx, &path, loaded)).await;
    }
    // Small files (the common case) are read inline; the size is only a hint, `load`
    // checks the file again.
    let (path, seen) = ctx.workspace.resolve_seen(&args.file_path, &ctx.working_dir)?;
    let size = seen.as_ref().map_or(0, std::fs::Metadata::len);
    blocking_sized(size, move || {
        let loaded = load_seen(&ctx, &path, seen)?;
        render(args, &ctx, &path, loaded)
    })
    .await
}

/// Whether `path` is named like an image `read` returns as one.
fn is_image_name(path: &str) -> bool {
    let ext = std::path::Path::new(path).extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    matches!(ext.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp")
}

fn render(args: Args, ctx: &ToolContext, path: &std::path::Path, loaded: Loaded) -> Result<ToolOutput, ToolError> {
    let path = path.to_path_buf();
    let shown = ctx.workspace.display(&path);
    if !loaded.exists() {
        return Err(not_found(ctx, &path));
    }
    remember(ctx, &path, loaded.hash);
    let mut out = ToolOutput::new("", "")
        .with("path", shown.clone())
        .with("source", loaded.source())
        .with("hash", loaded.hash.to_string());
    if let Origin::Editor { version, .. } = loaded.origin {
        out = out.with("version", version);
    }
    let total = count_lines(&loaded.text);
    if total == 0 {
        out.title = format!("Read {shown} (empty)");
        out.output = "(the file is empty)".to_owned();
        return Ok(out.with("totalLines", 0));
    }
    let offset = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    if offset > total {
        return Err(ToolError::new(format!(
            "offset {offset} is past the end of `{shown}`, which has {total} line(s); use an offset from 1 to {total}"
        )));
    }
    // Jump to the first line with memchr, and build the output in one buffer: this is the
    // hottest path of the whole tool set.
    let bytes = loaded.text.as_bytes();
    let start =
        if offset == 1 { 0 } else { memchr::memchr_iter(b'\n', bytes).nth(offset - 2).map_or(bytes.len(), |i| i + 1) };
    let mut text = String::with_capacity((bytes.len() - start).min(MAX_OUTPUT_BYTES) + 8 * limit.min(total));
    let mut last = offset - 1;
    let mut cut_lines = 0usize;
    let mut budget_hit = false;
    for (k, line) in lines(&loaded.text[start..]).take(limit).enumerate() {
        let mut digits = itoa::Buffer::new();
        let number = digits.format(offset + k);
        let (line, cut) = cut_line(line);
        let width = number.len().max(6) + 2 + line.len();
        if text.len() + width > MAX_OUTPUT_BYTES && last >= offset {
            budget_hit = true;
            break;
        }
        cut_lines += usize::from(cut);
        text.push_str(&"      "[number.len().min(6)..]);
        text.push_str(number);
        text.push('\t');
        text.push_str(&line);
        text.push('\n');
        last = offset + k;
    }
    if last < total {
        let why = if budget_hit {
            format!("output limit of {} KB reached", MAX_OUTPUT_BYTES / 1024)
        } else {
            "limit reached".to_owned()
        };
        text.push_str(&format!(
            "\n({why}: showing lines {offset}-{last} of {total}; continue with offset={})\n",
            last + 1
        ));
    }
    if cut_lines > 0 {
        text.push_str(&format!("\n({cut_lines} line(s) longer than {MAX_LINE_CHARS} characters were cut)\n"));
    }
    out.title = if offset == 1 && last == total {
        format!("Read {shown} ({total} lines)")
    } else {
        format!("Read {shown} (lines {offset}-{last} of {total})")
    };
    out.output = text;
    Ok(out
        .with("totalLines", total)
        .with("startLine", offset)
        .with("endLine", last)
        .with("cutLines", cut_lines)
        .with("truncated", last < total))
}

/// The lines of `text` exactly as `str::lines` gives them (split at `\n`, a `\r` before it
/// dropped, no empty last line), found with memchr.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(at) => {
                let line = &rest[..at];
                rest = &rest[at + 1..];
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            None => Some(std::mem::take(&mut rest)),
        }
    })
}

/// "Does not exist", with similar names from the same directory.
pub(crate) fn not_found(ctx: &ToolContext, path: &std::path::Path) -> ToolError {
    let shown = ctx.workspace.display(path);
    let wanted = path.file_stem().map(|s| s.to_string_lossy().to_lowercase()).unwrap_or_default();
    let mut similar: Vec<String> = path
        .parent()
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_lowercase();
            let stem = name.split('.').next().unwrap_or_default().to_owned();
            (!wanted.is_empty() && (name.contains(&wanted) || (!stem.is_empty() && wanted.contains(&stem))))
                .then(|| ctx.workspace.display(&entry.path()))
        })
        .collect();
    similar.sort();
    similar.truncate(5);
    let hint = if similar.is_empty() {
        "use `list` or `glob` to find the right path".to_owned()
    } else {
        format!("did you mean {}?", similar.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
    };
    ToolError::new(format!("`{shown}` does not exist; {hint}")).with("notFound", true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// The same lines as `str::lines`, whatever mix of `\n`, `\r\n` and lone `\r`.
        #[test]
        fn lines_are_str_lines(text in "[a\\r\\né]{0,30}") {
            prop_assert_eq!(lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
        }
    }
}
