//! The system prompt: how to work here, the environment, and what the person and the project
//! tell the agent in files (instruction files from the root down, always-on rules, the skills'
//! names; see `tandem-guidance`), under the model's instruction budget.

use std::path::Path;

use tandem_protocol::ModeId;

const BASE: &str = "You are Tandem, a coding agent working inside the person's editor, on their project.

How to work:
- Use the tools to look before you change anything: read files, search with grep and glob. Paths are relative to the workspace root (or absolute inside it).
- Make focused changes with `edit` (exact `old_string`, enough context to be unique), `multiedit` for several edits at once, `apply_patch` for larger changes, `write` for new files. Read a file before editing it; if an edit is refused because the file changed, read it again.
- The person reviews every change as a diff and may accept all of it, some hunks, or none. When a change or a command is rejected, do not repeat it unchanged: adjust, or ask what they want.
- Commands run with `bash` in the workspace; read-only ones run at once, others may need the person's approval; destructive ones are refused.
- More tools (`multiedit`, `apply_patch`, `todowrite`, `lsp`, `webfetch`, memories, sub-agents, ...) are found with `tool_search`, which loads them.
- Keep answers short and concrete. When the task is done, say what you changed and how you checked it.";

/// The system prompt for a session in `mode`, working in `cwd` of the workspace at `root`, with
/// at most `budget` bytes of instruction files and rules; and what the guidance part holds.
pub(crate) fn system_prompt(
    root: &Path,
    cwd: &Path,
    mode: ModeId,
    budget: usize,
) -> (String, tandem_guidance::SystemBlock) {
    let mut prompt = String::from(BASE);
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    prompt.push_str(&format!(
        "\n\nEnvironment:\n- workspace root: {}\n- working directory: {}\n- platform: {} ({})\n- date: {}\n",
        root.display(),
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
        date.get(..10).unwrap_or(&date),
    ));
    if mode == ModeId::Plan {
        prompt.push_str(
            "\nThe session is in plan mode: tools that change files or run commands are blocked. Investigate, then present a plan; the person switches the mode to carry it out.\n",
        );
    }
    let block = tandem_guidance::system_block(&tandem_guidance::Places::new(root, cwd), budget);
    prompt.push_str(&block.text);
    (prompt, block)
}

/// Adds the person's own text (`--append-system-prompt`) at the end of `system`.
pub(crate) fn append(system: &mut String, extra: Option<&str>) {
    if let Some(extra) = extra.filter(|e| !e.trim().is_empty()) {
        system.push_str("\n\n");
        system.push_str(extra);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_instructions_are_included() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("AGENTS.md"), "Always run `make check`.\n")?;
        let (prompt, _) = system_prompt(dir.path(), dir.path(), ModeId::Plan, 40_000);
        assert!(prompt.contains("<instructions file=\"AGENTS.md\">"));
        assert!(prompt.contains("Always run `make check`."));
        assert!(prompt.contains("plan mode"));
        assert!(!prompt.contains("CLAUDE.md"));
        Ok(())
    }

    #[test]
    fn instructions_that_point_outside_never_reach_the_prompt() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().join("ws");
        std::fs::create_dir(&root)?;
        std::fs::write(dir.path().join("credentials"), "aws_secret_access_key=SECRET123")?;
        std::os::unix::fs::symlink(dir.path().join("credentials"), root.join("AGENTS.md"))?;
        std::os::unix::fs::symlink("/proc/self/environ", root.join("CLAUDE.md"))?;
        let (prompt, _) = system_prompt(&root, &root, ModeId::Default, 40_000);
        assert!(!prompt.contains("SECRET123"), "{prompt}");
        assert!(!prompt.contains("<instructions"), "{prompt}");
        assert!(prompt.contains("outside the workspace"), "{prompt}");
        Ok(())
    }

    #[test]
    fn long_instructions_are_cut_with_a_visible_note() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("AGENTS.md"), "é".repeat(20_000))?;
        let (prompt, block) = system_prompt(dir.path(), dir.path(), ModeId::Default, 10_000);
        assert!(prompt.contains("Instruction budget reached"), "the note is missing");
        assert_eq!(block.cut.len(), 1);
        assert!(prompt.len() < 10_000 + BASE.len() + 1000);
        Ok(())
    }
}
