//! Custom slash commands: `.tandem/commands/<name>.md`, then `.claude/commands/<name>.md` (so
//! a team's existing commands work), then `~/.config/tandem/commands/<name>.md`; the first of a
//! name wins. Front matter: `description`, `argument-hint`, `model`, `mode`. `/name args` sends
//! the body with `$ARGUMENTS` and `$1`…`$9` replaced.

use crate::front;
use crate::places::{Origin, Places, Problem, folders_of, markdown_files, text_or_problem};

/// The keys a command's front matter may have.
const KEYS: [&str; 4] = ["description", "argument-hint", "model", "mode"];
/// Keys of Claude Code's commands that Tandem reads past without a warning.
const CLAUDE_KEYS: [&str; 2] = ["allowed-tools", "disable-model-invocation"];

/// The names every front door keeps for its own commands; a custom command of one of these
/// names is not offered (the built-in wins, with a notice).
pub const BUILTINS: [&str; 14] = [
    "mode", "model", "undo", "redo", "compact", "context", "init", "help", "exit", "quit", "q", "sessions", "resume",
    "new",
];

/// What `/init` asks the model to do.
pub const BUILTIN_INIT: &str = "Write a first AGENTS.md for this project, at the workspace root: what the project is (one or two sentences), its layout (the main folders and what each holds), how to build it, run it and run its tests (the exact commands, found in its manifests, scripts and CI files), and the conventions you find in the code (style, error handling, naming, where tests go). Look before you write: list the root, read the manifests, the README and a few representative source files. Keep it short and concrete (under 80 lines); no generic advice. If an AGENTS.md already exists, improve it instead, keeping what is still true. Write it with the `write` tool (or `edit` for an existing one) so the person reviews it.";

/// One custom command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// Its name (the file name without `.md`): typed as `/name`.
    pub name: String,
    /// The file as shown.
    pub file: String,
    /// Whose it is.
    pub origin: Origin,
    /// `description` (else the body's first line).
    pub description: String,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// `model`: the turn it starts uses this model.
    pub model: Option<String>,
    /// `mode`: the session switches to this mode first (as written; the agent checks it).
    pub mode: Option<String>,
    /// The text sent, before expansion.
    pub body: String,
}

/// A prompt that names a command: `/name` and what follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invocation<'a> {
    /// The name, without `/`.
    pub name: &'a str,
    /// The arguments, trimmed.
    pub arguments: &'a str,
}

/// The command a prompt starts with, when it is `/name` or `/name arguments`.
pub fn invocation(prompt: &str) -> Option<Invocation<'_>> {
    let text = prompt.trim();
    let rest = text.strip_prefix('/')?;
    let (name, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    valid_name(name).then_some(Invocation { name, arguments: arguments.trim() })
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// The notice for a custom command that a built-in one shadows.
pub fn shadowed_notice(file: &str, name: &str) -> String {
    format!(
        "`/{name}` is a built-in command, which wins: the custom command in {file} is not offered (rename the file)"
    )
}

/// The body with `$ARGUMENTS` (all arguments as typed) and `$1`…`$9` (each word; missing ones
/// are empty) replaced. A body that uses neither gets the arguments appended after a blank line,
/// so nothing typed is lost.
pub fn expand(body: &str, arguments: &str) -> String {
    // Split as a shell would; an unclosed quote runs to the end.
    let (words, _) = tandem_policy::shell_words(arguments);
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            rest = tail;
        } else if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let index = digit as usize - '1' as usize;
            out.push_str(words.get(index).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out = format!("{}\n\nARGUMENTS: {arguments}", out.trim_end());
    }
    out
}

/// Parses a command file's text.
pub(crate) fn parse(name: &str, file: &str, origin: Origin, text: &str) -> Result<(Command, Vec<Problem>), Problem> {
    let front = front::parse(text).map_err(|err| Problem::error(file, Some(err.line), err.message))?;
    let text_of = |key: &str| {
        front.text(key).map(|v| v.map(str::to_owned)).map_err(|err| Problem::error(file, Some(err.line), err.message))
    };
    let warnings = front
        .unknown(&KEYS)
        .filter(|(key, _)| !CLAUDE_KEYS.contains(key))
        .map(|(key, line)| {
            Problem::warning(
                file,
                Some(line),
                format!("unknown key `{key}` ignored (a command takes {})", KEYS.join(", ")),
            )
        })
        .collect();
    let body = front.body.trim().to_owned();
    let description = text_of("description")?
        .filter(|d| !d.trim().is_empty())
        .or_else(|| body.lines().map(|l| l.trim_start_matches('#').trim()).find(|l| !l.is_empty()).map(str::to_owned))
        .unwrap_or_else(|| format!("custom command from {file}"));
    let command = Command {
        name: name.to_owned(),
        file: file.to_owned(),
        origin,
        description,
        argument_hint: text_of("argument-hint")?,
        model: text_of("model")?.filter(|m| !m.trim().is_empty()),
        mode: text_of("mode")?.filter(|m| !m.trim().is_empty()),
        body,
    };
    Ok((command, warnings))
}

/// Every custom command offered, sorted by name, and the problems found; a name taken by a
/// built-in command or an earlier folder is not offered (the first is said in a warning).
pub fn commands(places: &Places) -> (Vec<Command>, Vec<Problem>) {
    let mut found: Vec<Command> = Vec::new();
    let mut problems = Vec::new();
    for (origin, dir) in folders_of(places, "commands", true) {
        for path in markdown_files(&dir) {
            let file = places.shown(&path);
            let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if found.iter().any(|c| c.name == name) {
                continue;
            }
            if !valid_name(&name) {
                problems.push(Problem::warning(
                    &file,
                    None,
                    "not offered: a command name uses letters, digits, `-`, `_`, `.` and `:`",
                ));
                continue;
            }
            if BUILTINS.contains(&name.as_str()) {
                problems.push(Problem::warning(&file, None, shadowed_notice(&file, &name)));
                continue;
            }
            let Some(text) = text_or_problem(places, origin, &path, &mut problems) else { continue };
            match parse(&name, &file, origin, &text) {
                Ok((command, warnings)) => {
                    problems.extend(warnings);
                    found.push(command);
                }
                Err(problem) => problems.push(problem),
            }
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    (found, problems)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn arguments_expand_as_documented() {
        assert_eq!(expand("Review $ARGUMENTS now", "src/a.rs  for bugs"), "Review src/a.rs  for bugs now");
        assert_eq!(expand("Move $1 to $2 ($3)", "a.rs \"new dir/b.rs\""), "Move a.rs to new dir/b.rs ()");
        assert_eq!(expand("Cost: $5 and $HOME and $", "x"), "Cost:  and $HOME and $");
        assert_eq!(expand("Summarise the diff.", "briefly"), "Summarise the diff.\n\nARGUMENTS: briefly");
        assert_eq!(expand("Summarise the diff.", ""), "Summarise the diff.");
    }

    #[test]
    fn invocations_are_recognised() {
        assert_eq!(invocation("/review src/a.rs x"), Some(Invocation { name: "review", arguments: "src/a.rs x" }));
        assert_eq!(invocation("  /fix  "), Some(Invocation { name: "fix", arguments: "" }));
        assert_eq!(invocation("/ not"), None);
        assert_eq!(invocation("/usr/bin/env is a path"), None);
        assert_eq!(invocation("review"), None);
    }

    #[test]
    fn front_matter_is_read_and_checked() -> Result<(), Problem> {
        let (command, warnings) = parse(
            "review",
            ".claude/commands/review.md",
            Origin::Project,
            "---\ndescription: Review a file\nargument-hint: <file>\nallowed-tools: Bash(git diff:*)\nmodel: small\nmode: plan\ncolour: red\n---\nReview $1.\n",
        )?;
        assert_eq!(command.description, "Review a file");
        assert_eq!(command.argument_hint.as_deref(), Some("<file>"));
        assert_eq!((command.model.as_deref(), command.mode.as_deref()), (Some("small"), Some("plan")));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].line, Some(7));
        let (untitled, _) = parse("x", "x.md", Origin::User, "# Tidy up\nRemove dead code.")?;
        assert_eq!(untitled.description, "Tidy up");
        let err = parse("x", "x.md", Origin::User, "---\ndescription: [\n---\n").err();
        assert_eq!(err.map(|p| (p.line, p.file)), Some((Some(2), "x.md".to_owned())));
        Ok(())
    }

    proptest! {
        /// A body without placeholders keeps its text and gains exactly the arguments; with
        /// `$ARGUMENTS`, the arguments appear as typed.
        #[test]
        fn expansion_keeps_what_was_typed(body in "[a-zA-Z .,\n]{0,40}", arguments in "[a-zA-Z0-9 ./\"]{0,30}") {
            let plain = expand(&body, &arguments);
            prop_assert!(plain.starts_with(body.trim_end()));
            if !arguments.is_empty() {
                let tail = format!("ARGUMENTS: {arguments}");
                prop_assert!(plain.ends_with(&tail));
            }
            let with = expand(&format!("{body}$ARGUMENTS{body}"), &arguments);
            prop_assert_eq!(with, format!("{body}{arguments}{body}"));
        }
    }
}
