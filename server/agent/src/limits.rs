//! Output limits by semantic type: no tool result the model sees exceeds its cap, and a cut
//! result says how to get the rest.

use tandem_protocol::ToolGroup;

/// What a tool result contains, which decides its cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// File content (`read`).
    FileContent,
    /// Search results (`grep`, `glob`, `list`, language-server answers).
    SearchResults,
    /// Command output (`bash`, scripts).
    CommandOutput,
    /// Anything else: status lines, diffs of edits, errors.
    Status,
}

impl OutputKind {
    /// The kind of a tool's results.
    pub fn of(tool: &str, group: ToolGroup) -> Self {
        match (tool, group) {
            ("read", _) => Self::FileContent,
            (_, ToolGroup::Search | ToolGroup::Lsp) | ("list", _) => Self::SearchResults,
            (_, ToolGroup::Exec) => Self::CommandOutput,
            (_, ToolGroup::Web) => Self::FileContent,
            _ => Self::Status,
        }
    }

    /// Most characters the model sees.
    pub fn cap(self) -> usize {
        match self {
            Self::FileContent => 100_000,
            Self::SearchResults => 40_000,
            Self::CommandOutput => 40_000,
            Self::Status => 20_000,
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Self::FileContent => "read the rest with `offset` and `limit`",
            Self::SearchResults => "narrow the pattern or path, or use `max_results` and a more specific glob",
            Self::CommandOutput => {
                "filter the command's output (e.g. `| tail -n 50`, `| grep error`) or run it in the background and read its log"
            }
            Self::Status => "ask for a smaller piece",
        }
    }
}

/// `text` cut to `kind`'s cap on a line boundary when possible, with a note saying what was
/// left out and how to get it.
pub fn cap_output(text: &str, kind: OutputKind) -> String {
    let cap = kind.cap();
    if text.len() <= cap {
        return text.to_owned();
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(newline) = text[..end].rfind('\n').filter(|&at| at > cap / 2) {
        end = newline + 1;
    }
    let omitted_lines = text[end..].lines().count();
    format!(
        "{}\n… [output cut at {} of {} characters; {} more lines not shown: {}]",
        &text[..end],
        end,
        text.len(),
        omitted_lines,
        kind.hint()
    )
}

/// The first line of `text`, cut at `max` characters (`…` marks a cut, ` …` more lines).
pub(crate) fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let cut = tandem_text::clip(line, max);
    if text.lines().nth(1).is_some() && !cut.ends_with('…') { format!("{cut} …") } else { cut }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_untouched_and_long_output_is_cut_with_a_hint() {
        assert_eq!(cap_output("abc", OutputKind::Status), "abc");
        let long: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let cut = cap_output(&long, OutputKind::SearchResults);
        assert!(cut.len() < OutputKind::SearchResults.cap() + 200, "{}", cut.len());
        assert!(cut.contains("more lines not shown: narrow the pattern"), "{}", &cut[cut.len() - 200..]);
        // Cut on a line boundary.
        let body = cut.split("\n…").next().unwrap_or_default();
        assert!(body.ends_with('\n'));
        // Multi-byte text is cut on a character boundary.
        let wide = "é".repeat(30_000);
        assert!(cap_output(&wide, OutputKind::Status).starts_with('é'));
    }

    #[test]
    fn kinds_follow_the_tool() {
        assert_eq!(OutputKind::of("read", ToolGroup::Fs), OutputKind::FileContent);
        assert_eq!(OutputKind::of("grep", ToolGroup::Search), OutputKind::SearchResults);
        assert_eq!(OutputKind::of("bash", ToolGroup::Exec), OutputKind::CommandOutput);
        assert_eq!(OutputKind::of("edit", ToolGroup::Fs), OutputKind::Status);
    }
}
