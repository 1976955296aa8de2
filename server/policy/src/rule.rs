//! One permission rule: `tool(specifier)` as the person writes it, parsed once.
//!
//! - `bash(npm test:*)` — a command prefix, word by word (`npm test`, `npm test -- -x`; not
//!   `npm testx`); `bash(npm test *)` says the same; `bash(cargo check)` — exactly that command.
//! - `edit(src/**)`, `read(.env)`, `read(**/*.pem)` — gitignore-style globs relative to the
//!   project (a pattern without `/` matches at any depth; a directory matches what is under
//!   it); `//abs/path/**` is absolute, `~/x` is under the home directory.
//! - `webfetch(domain:docs.rs)` — that host and its subdomains.
//! - `mcp__server__tool`, `mcp__server` (every tool of the server), `mcp__server__*`.
//! - A bare tool name (`webfetch`, `bash(*)`) covers every call of the tool.
//!
//! Claude Code's names work too: `Bash`, `Edit` / `MultiEdit` / `Write` / `NotebookEdit` (every
//! tool that changes files), `Read` / `Grep` / `Glob` / `LS` (every tool that reads them),
//! `WebFetch`, `WebSearch`, `Task`.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// What a rule does when it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Runs without asking.
    Allow,
    /// Always asks the person, whatever the mode.
    Ask,
    /// Never runs, in any mode.
    Deny,
}

impl Action {
    /// The config key: `allow`, `ask`, `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Ask => "ask",
            Action::Deny => "deny",
        }
    }
}

/// Whose configuration a rule comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// The person's own configuration (`~/.config/tandem/config.toml`).
    Person,
    /// The project's `.tandem/config.toml` (its allow and ask count only once it is trusted).
    Project,
    /// The editor's settings (the person's, through their editor).
    Editor,
}

/// Where a rule was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Source {
    /// Whose it is.
    pub origin: Origin,
    /// The file (or `editor settings`).
    pub file: String,
}

/// The family of tools a rule's tool name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Shell commands: `bash` and the shell-script tool.
    Shell,
    /// Every tool that changes files.
    Edits,
    /// Every tool that reads files.
    Reads,
    /// One tool, by its canonical name (`webfetch`, `run_python_script`, `mcp__srv__tool`).
    Tool(String),
    /// Every tool of an MCP server (`mcp__srv`, `mcp__srv__*`).
    McpServer(String),
}

/// What a rule says about the calls of its tool.
#[derive(Clone, Debug)]
pub enum Specifier {
    /// Every call.
    Any,
    /// Commands whose words start with these.
    Prefix(Vec<String>),
    /// Exactly this command.
    Exact(Vec<String>),
    /// Paths matching a gitignore-style glob.
    Glob(Glob),
    /// URLs on this host or a subdomain of it.
    Domain(String),
}

/// A gitignore-style glob, relative to the project or absolute.
#[derive(Clone, Debug)]
pub struct Glob {
    /// As written.
    pub pattern: String,
    /// Anchored at `/` (an absolute pattern) rather than at the project.
    absolute: bool,
    matcher: Gitignore,
}

impl Glob {
    fn new(raw: &str, home: Option<&Path>) -> Result<Self, RuleError> {
        let invalid = |why: String| RuleError { rule: String::new(), why };
        if raw.starts_with('!') {
            return Err(invalid("a glob cannot start with `!` (write a deny or ask rule instead)".to_owned()));
        }
        let (absolute, pattern) = if let Some(rest) = raw.strip_prefix("//") {
            (true, format!("/{rest}"))
        } else if let Some(rest) = raw.strip_prefix("~/") {
            let home = home.ok_or_else(|| invalid("`~/` needs a home directory".to_owned()))?;
            (true, format!("{}/{rest}", home.display()))
        } else {
            (false, raw.strip_prefix("./").unwrap_or(raw).to_owned())
        };
        let root = if absolute { PathBuf::from("/") } else { PathBuf::from("/project") };
        let mut builder = GitignoreBuilder::new(&root);
        builder.add_line(None, &pattern).map_err(|e| invalid(format!("invalid glob `{raw}`: {e}")))?;
        let matcher = builder.build().map_err(|e| invalid(format!("invalid glob `{raw}`: {e}")))?;
        Ok(Self { pattern: raw.to_owned(), absolute, matcher })
    }

    /// Whether `path` matches: `relative` is its path inside the project (`None` outside it),
    /// `absolute` its full path.
    pub fn matches(&self, relative: Option<&Path>, absolute: &Path) -> bool {
        let path = if self.absolute { absolute.strip_prefix("/").ok() } else { relative };
        let Some(path) = path.filter(|p| !p.as_os_str().is_empty() && !p.has_root()) else { return false };
        self.matcher.matched_path_or_any_parents(path, false).is_ignore()
    }
}

/// A parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Allow, ask or deny.
    pub action: Action,
    /// As written (`bash(npm test:*)`).
    pub text: String,
    /// The tools it covers.
    pub target: Target,
    /// Which of their calls.
    pub specifier: Specifier,
    /// Where it was written.
    pub source: Source,
}

/// Why a rule could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule `{rule}`: {why}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong, and what to write.
    pub why: String,
}

/// Claude Code's tool names and the families they stand for.
fn claude_target(name: &str) -> Option<Target> {
    Some(match name {
        "Bash" => Target::Shell,
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => Target::Edits,
        "Read" | "Grep" | "Glob" | "LS" => Target::Reads,
        "WebFetch" => Target::Tool("webfetch".to_owned()),
        "WebSearch" => Target::Tool("websearch".to_owned()),
        "Task" => Target::Tool("agent".to_owned()),
        _ => return None,
    })
}

/// The shell tools (their calls are command lines).
pub const SHELL_TOOLS: &[&str] = &["bash", "run_shell_script"];
/// The tools whose changes go through the review of file changes.
pub const EDIT_TOOLS: &[&str] =
    &["edit", "write", "multiedit", "apply_patch", "append", "delete", "generate_readme", "lsp"];
/// The tools that read files.
pub const READ_TOOLS: &[&str] = &["read", "list", "glob", "grep"];

impl Rule {
    /// Parses `text` (`tool(specifier)` or `tool`). `canonical` maps a tool name or alias to
    /// the tool's name (`None`: no such tool, kept as written); `home` expands `~/`.
    pub fn parse(
        action: Action,
        text: &str,
        source: Source,
        canonical: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<Rule, RuleError> {
        let error = |why: &str| RuleError { rule: text.to_owned(), why: why.to_owned() };
        let trimmed = text.trim();
        let (name, spec) = match trimmed.split_once('(') {
            Some((name, rest)) => {
                let inner = rest.strip_suffix(')').ok_or_else(|| error("it opens `(` but does not end with `)`"))?;
                (name.trim(), Some(inner.trim()))
            }
            None => (trimmed, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*') {
            return Err(error(
                "write `tool(specifier)`, e.g. `bash(npm test:*)`, `edit(src/**)`, `webfetch(domain:docs.rs)`",
            ));
        }
        let target = if let Some(target) = claude_target(name) {
            target
        } else if let Some(server) = name.strip_prefix("mcp__") {
            match server.split_once("__") {
                None => Target::McpServer(server.to_owned()),
                Some((server, "*")) => Target::McpServer(server.to_owned()),
                Some(_) => Target::Tool(name.to_owned()),
            }
        } else {
            let lower = name.to_ascii_lowercase();
            let tool = canonical(&lower).unwrap_or(lower);
            if SHELL_TOOLS.contains(&tool.as_str()) {
                Target::Shell
            } else if tool == "edit" {
                // `edit(...)` is the family, as Claude Code's `Edit(...)`; `write(...)` and the
                // others name their own tool.
                Target::Edits
            } else if tool == "read" {
                Target::Reads
            } else {
                Target::Tool(tool)
            }
        };
        let spec = spec.filter(|s| !s.is_empty() && *s != "*");
        let specifier = match (&target, spec) {
            (_, None) => Specifier::Any,
            (Target::Shell, Some(spec)) => command_specifier(spec).map_err(|e| error(&e.why))?,
            (Target::Edits | Target::Reads, Some(spec)) => {
                Specifier::Glob(Glob::new(spec, home).map_err(|e| error(&e.why))?)
            }
            (Target::Tool(tool), Some(spec))
                if READ_TOOLS.contains(&tool.as_str()) || EDIT_TOOLS.contains(&tool.as_str()) =>
            {
                Specifier::Glob(Glob::new(spec, home).map_err(|e| error(&e.why))?)
            }
            (Target::Tool(tool), Some(spec)) if tool == "webfetch" => {
                let domain = spec
                    .strip_prefix("domain:")
                    .ok_or_else(|| error("webfetch takes `domain:HOST`, e.g. `webfetch(domain:docs.rs)`"))?;
                let domain = domain.trim().trim_start_matches("*.").trim_end_matches('.').to_ascii_lowercase();
                if domain.is_empty() || domain.contains(['/', ':', ' ']) {
                    return Err(error("write a host name after `domain:`, e.g. `domain:docs.rs`"));
                }
                Specifier::Domain(domain)
            }
            (_, Some(_)) => {
                return Err(error(
                    "only shell tools (a command), file tools (a glob) and webfetch (`domain:`) take a specifier; write the tool name alone",
                ));
            }
        };
        Ok(Rule { action, text: trimmed.to_owned(), target, specifier, source })
    }

    /// Whether the rule is about `tool` (its canonical name), whatever the call.
    pub fn covers_tool(&self, tool: &str) -> bool {
        match &self.target {
            Target::Shell => SHELL_TOOLS.contains(&tool),
            Target::Edits => EDIT_TOOLS.contains(&tool),
            Target::Reads => READ_TOOLS.contains(&tool),
            Target::Tool(name) => name == tool,
            Target::McpServer(server) => tool
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(server.as_str()))
                .is_some_and(|rest| rest.starts_with("__")),
        }
    }
}

/// `npm test:*`, `npm test *` (a prefix) or `cargo check` (exact).
fn command_specifier(spec: &str) -> Result<Specifier, RuleError> {
    let invalid = |why: &str| RuleError { rule: String::new(), why: why.to_owned() };
    let (prefix, body) = match spec.strip_suffix(":*").or_else(|| spec.strip_suffix(" *")) {
        Some(body) => (true, body),
        None => (false, spec),
    };
    let words = split_words(body).map_err(|why| invalid(&why))?;
    if words.is_empty() {
        return Err(invalid("the command is empty; write `bash` alone for every command"));
    }
    if words.iter().any(|w| w.contains('*')) {
        return Err(invalid("`*` may only end a command (`npm test:*`)"));
    }
    Ok(if prefix { Specifier::Prefix(words) } else { Specifier::Exact(words) })
}

/// Splits a command of a rule into words, with single and double quotes.
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    match shell_words(text) {
        (_, true) => Err("a quote is not closed".to_owned()),
        (words, false) => Ok(words),
    }
}

/// Splits text into words as a shell would: at whitespace, with `"…"` and `'…'` keeping a word
/// together (no escapes). Also says whether a quote was left open (its word runs to the end).
pub fn shell_words(text: &str) -> (Vec<String>, bool) {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    (words, quote.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person() -> Source {
        Source { origin: Origin::Person, file: "config.toml".into() }
    }

    fn parse(text: &str) -> Result<Rule, RuleError> {
        let canonical = |name: &str| match name {
            "shell" | "run_command" => Some("bash".to_owned()),
            "fetch" => Some("webfetch".to_owned()),
            _ => None,
        };
        Rule::parse(Action::Allow, text, person(), &canonical, Some(Path::new("/home/me")))
    }

    #[test]
    fn rules_parse_into_targets_and_specifiers() {
        let shown: Vec<String> = [
            "bash(npm test:*)",
            "Bash(npm run test:*)",
            "bash(cargo check)",
            "shell(git push *)",
            "bash",
            "bash(*)",
            "edit(src/**)",
            "Write(docs/*.md)",
            "read(.env)",
            "Read(./secrets/**)",
            "read(~/.ssh/**)",
            "read(//etc/passwd)",
            "webfetch(domain:docs.rs)",
            "WebFetch(domain:*.example.com)",
            "fetch(domain:x.org)",
            "mcp__github__create_issue",
            "mcp__github",
            "mcp__github__*",
            "write(notes.txt)",
            "agent",
            "Task",
        ]
        .iter()
        .map(|t| match parse(t) {
            Ok(rule) => format!(
                "{t:<32} {:?} {:?}",
                rule.target,
                match &rule.specifier {
                    Specifier::Glob(g) => format!("Glob({}, absolute: {})", g.pattern, g.absolute),
                    other => format!("{other:?}"),
                }
            ),
            Err(e) => format!("{t:<32} ERROR {e}"),
        })
        .collect();
        expect_test::expect![[r#"
            bash(npm test:*)                 Shell "Prefix([\"npm\", \"test\"])"
            Bash(npm run test:*)             Shell "Prefix([\"npm\", \"run\", \"test\"])"
            bash(cargo check)                Shell "Exact([\"cargo\", \"check\"])"
            shell(git push *)                Shell "Prefix([\"git\", \"push\"])"
            bash                             Shell "Any"
            bash(*)                          Shell "Any"
            edit(src/**)                     Edits "Glob(src/**, absolute: false)"
            Write(docs/*.md)                 Edits "Glob(docs/*.md, absolute: false)"
            read(.env)                       Reads "Glob(.env, absolute: false)"
            Read(./secrets/**)               Reads "Glob(./secrets/**, absolute: false)"
            read(~/.ssh/**)                  Reads "Glob(~/.ssh/**, absolute: true)"
            read(//etc/passwd)               Reads "Glob(//etc/passwd, absolute: true)"
            webfetch(domain:docs.rs)         Tool("webfetch") "Domain(\"docs.rs\")"
            WebFetch(domain:*.example.com)   Tool("webfetch") "Domain(\"example.com\")"
            fetch(domain:x.org)              Tool("webfetch") "Domain(\"x.org\")"
            mcp__github__create_issue        Tool("mcp__github__create_issue") "Any"
            mcp__github                      McpServer("github") "Any"
            mcp__github__*                   McpServer("github") "Any"
            write(notes.txt)                 Tool("write") "Glob(notes.txt, absolute: false)"
            agent                            Tool("agent") "Any"
            Task                             Tool("agent") "Any""#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn bad_rules_say_what_to_write() {
        let shown: Vec<String> = [
            "bash(npm test",
            "bash(npm * test)",
            "bash('unclosed)",
            "webfetch(docs.rs)",
            "webfetch(domain:)",
            "todowrite(x)",
            "edit(!src/**)",
            "(x)",
        ]
        .iter()
        .map(|t| parse(t).map(|_| "ok".to_owned()).unwrap_or_else(|e| e.to_string()))
        .collect();
        expect_test::expect![[r#"
            invalid permission rule `bash(npm test`: it opens `(` but does not end with `)`
            invalid permission rule `bash(npm * test)`: `*` may only end a command (`npm test:*`)
            invalid permission rule `bash('unclosed)`: a quote is not closed
            invalid permission rule `webfetch(docs.rs)`: webfetch takes `domain:HOST`, e.g. `webfetch(domain:docs.rs)`
            invalid permission rule `webfetch(domain:)`: write a host name after `domain:`, e.g. `domain:docs.rs`
            invalid permission rule `todowrite(x)`: only shell tools (a command), file tools (a glob) and webfetch (`domain:`) take a specifier; write the tool name alone
            invalid permission rule `edit(!src/**)`: a glob cannot start with `!` (write a deny or ask rule instead)
            invalid permission rule `(x)`: write `tool(specifier)`, e.g. `bash(npm test:*)`, `edit(src/**)`, `webfetch(domain:docs.rs)`"#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn globs_are_gitignore_style_relative_to_the_project() -> Result<(), RuleError> {
        let glob = |text: &str| match parse(text)?.specifier {
            Specifier::Glob(g) => Ok(g),
            _ => Err(RuleError { rule: text.into(), why: "not a glob".into() }),
        };
        let at = |g: &Glob, rel: &str| g.matches(Some(Path::new(rel)), &Path::new("/p").join(rel));
        let env = glob("read(.env)")?;
        assert!(at(&env, ".env") && at(&env, "sub/.env") && !at(&env, ".env.example"));
        let pem = glob("read(**/*.pem)")?;
        assert!(at(&pem, "a/b/key.pem") && at(&pem, "key.pem") && !at(&pem, "key.pem.txt"));
        let src = glob("edit(src/**)")?;
        assert!(
            at(&src, "src/a.rs") && at(&src, "src/deep/b.rs") && !at(&src, "tests/src/a.rs") && !at(&src, "srcx/a")
        );
        let dir = glob("edit(secrets/)")?;
        assert!(at(&dir, "secrets/x.txt") && at(&dir, "a/secrets/y"));
        let abs = glob("read(//etc/**)")?;
        assert!(abs.matches(None, Path::new("/etc/passwd")) && !at(&abs, "etc/passwd"));
        let home = glob("read(~/.ssh/**)")?;
        assert!(home.matches(None, Path::new("/home/me/.ssh/id_rsa")));
        // Outside the project a relative glob matches nothing.
        assert!(!env.matches(None, Path::new("/elsewhere/.env")));
        Ok(())
    }
}
