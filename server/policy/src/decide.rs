//! Deciding a call against the rules: deny beats ask, ask beats allow; a compound command is
//! allowed only when every part of it is allowed or read-only.

use std::path::{Component, Path, PathBuf};

use crate::rule::{Action, Rule, Specifier, Target};

/// One simple command of a command line, as the shell parser saw it (pipelines, lists,
/// substitutions and `sh -c` scripts are split into their parts by the caller).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandPart {
    /// The words as written after quote removal; `None` for a word only known when it runs
    /// (`$X`, `$(…)`).
    pub words: Vec<Option<String>>,
    /// The program and its arguments once wrappers are seen through (`timeout 5 npm test` →
    /// `npm test`), when they differ from `words`.
    pub unwrapped: Option<Vec<Option<String>>>,
    /// It sets no variable that changes what runs and writes through no redirection: an allow
    /// rule may cover it.
    pub plain: bool,
    /// The classifier calls it read-only: it needs no rule.
    pub read_only: bool,
    /// The files its redirections name (`< .env`, `> out.txt`).
    pub files: Vec<String>,
}

impl CommandPart {
    /// The part's command line, for messages and "always" rules.
    pub fn text(&self) -> String {
        self.words.iter().map(|w| w.as_deref().unwrap_or("…")).collect::<Vec<_>>().join(" ")
    }
}

/// What the rules say about one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No rule decides: the mode does.
    Unruled,
    /// Every part is allowed by a rule (or read-only); `rules` are the rules that allowed.
    Allow {
        /// The rules that allowed it, as written.
        rules: Vec<String>,
    },
    /// A rule says to ask the person.
    Ask {
        /// Why (names the rule and its file).
        reason: String,
    },
    /// A rule denies it.
    Deny {
        /// Why (names the rule and its file).
        reason: String,
    },
}

/// The rules in force, with the project they apply to.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    rules: Vec<Rule>,
    /// The project's root: file globs are relative to it.
    root: PathBuf,
}

fn named(rule: &Rule) -> String {
    format!("`{}` ({} in {})", rule.text, rule.action.as_str(), rule.source.file)
}

/// The lexical normal form of `path` (`.` and `..` folded; no file system access).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl Rules {
    /// The rules `rules` for the project at `root`.
    pub fn new(root: PathBuf, rules: Vec<Rule>) -> Self {
        Self { rules, root }
    }

    /// Every rule, in the order they were given.
    pub fn all(&self) -> &[Rule] {
        &self.rules
    }

    /// Adds a rule (an "always" answer).
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// The project's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn of(&self, tool: &str, action: Action) -> impl Iterator<Item = &Rule> {
        self.rules.iter().filter(move |r| r.action == action && r.covers_tool(tool))
    }

    /// A call of `tool` that has nothing the rules can look into (an MCP tool, `agent`).
    pub fn decide_tool(&self, tool: &str) -> Verdict {
        self.decide_each(tool, &[()], |_, _| true)
    }

    /// A fetch of `url` by `tool`.
    pub fn decide_url(&self, tool: &str, url: &str) -> Verdict {
        let host = host_of(url);
        self.decide_each(tool, &[()], |rule, _| match &rule.specifier {
            Specifier::Any => true,
            Specifier::Domain(domain) => {
                host.as_deref().is_some_and(|h| h == domain || h.ends_with(&format!(".{domain}")))
            }
            _ => false,
        })
    }

    /// `tool`'s access to `paths` (absolute; resolved and as written, both are checked).
    pub fn decide_paths(&self, tool: &str, paths: &[PathBuf]) -> Verdict {
        if paths.is_empty() {
            return self.decide_tool(tool);
        }
        self.decide_each(tool, paths, |rule, path| self.path_matches(rule, path))
    }

    fn path_matches(&self, rule: &Rule, path: &Path) -> bool {
        match &rule.specifier {
            Specifier::Any => true,
            Specifier::Glob(glob) => {
                let absolute = normalize(&self.root.join(path));
                let relative = absolute.strip_prefix(&self.root).ok();
                glob.matches(relative, &absolute)
            }
            _ => false,
        }
    }

    /// Deny if a deny rule matches any item; ask if an ask rule does; allow if an allow rule
    /// matches every item; else no verdict.
    fn decide_each<T>(&self, tool: &str, items: &[T], matches: impl Fn(&Rule, &T) -> bool) -> Verdict {
        for action in [Action::Deny, Action::Ask] {
            if let Some(rule) = self.of(tool, action).find(|rule| items.iter().any(|item| matches(rule, item))) {
                return verdict(action, rule);
            }
        }
        let mut rules = Vec::new();
        for item in items {
            match self.of(tool, Action::Allow).find(|rule| matches(rule, item)) {
                Some(rule) => rules.push(rule.text.clone()),
                None => return Verdict::Unruled,
            }
        }
        rules.dedup();
        if rules.is_empty() { Verdict::Unruled } else { Verdict::Allow { rules } }
    }

    /// What the rules say about a call of `tool` with `arguments` before it runs, for what an
    /// approver does not see: the path a reading tool reads (`file_path` or `path`, from `cwd`;
    /// as written and as `resolve` resolves it, links followed), the URL of `webfetch`, any
    /// other tool as a whole. For a shell tool only a deny counts here (`parts` parses its
    /// command line); file changes are `Unruled`: the approver decides them with the staged
    /// files, and what a command asks with the mode.
    pub fn decide_call(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
        cwd: &Path,
        resolve: &dyn Fn(&str) -> Option<PathBuf>,
        parts: &dyn Fn(&str) -> Option<Vec<CommandPart>>,
    ) -> Verdict {
        use crate::rule::{EDIT_TOOLS, READ_TOOLS, SHELL_TOOLS};
        let text = |key: &str| arguments.get(key).and_then(serde_json::Value::as_str);
        if SHELL_TOOLS.contains(&tool) {
            // Only a deny is final before the call: what asks depends on the mode and the
            // classifier, which the approver weighs.
            let line = text("command").or_else(|| text("script")).unwrap_or_default();
            let dir = cwd.join(text("working_dir").unwrap_or("."));
            return match self.decide_command(tool, parts(line).as_deref(), &dir) {
                deny @ Verdict::Deny { .. } => deny,
                _ => Verdict::Unruled,
            };
        }
        if EDIT_TOOLS.contains(&tool) {
            return Verdict::Unruled;
        }
        if READ_TOOLS.contains(&tool) {
            let raw = text("file_path").or_else(|| text("path")).unwrap_or(".");
            let written = self.decide_paths(tool, &[cwd.join(raw)]);
            return match resolve(raw).map(|path| self.decide_paths(tool, &[path])) {
                Some(deny @ Verdict::Deny { .. }) => deny,
                _ => written,
            };
        }
        match (tool, text("url")) {
            ("webfetch", Some(url)) => self.decide_url(tool, url),
            _ => self.decide_tool(tool),
        }
    }

    /// A command line of `tool` split into `parts` (`None`: the parser could not read it),
    /// run in `cwd`.
    ///
    /// - Deny: a deny rule matches a part (as written, or its program once wrappers are seen
    ///   through, or by the program's file name when run from a path), or a word of a part
    ///   names a file a deny rule of the file tools covers (`cat .env` under `read(.env)`). A
    ///   part whose program is only known when it runs, or a line the parser cannot read, asks
    ///   when deny rules for commands exist: nobody can tell whether they cover it.
    /// - Ask: an ask rule matches a part.
    /// - Allow: every part is read-only or plain and matched by an allow rule, and at least
    ///   one allow rule was needed.
    pub fn decide_command(&self, tool: &str, parts: Option<&[CommandPart]>, cwd: &Path) -> Verdict {
        let denies: Vec<&Rule> = self.of(tool, Action::Deny).collect();
        let Some(parts) = parts else {
            if let Some(rule) = denies.first() {
                return Verdict::Ask {
                    reason: format!("the command cannot be parsed, so it cannot be checked against {}", named(rule)),
                };
            }
            return match self.of(tool, Action::Ask).next() {
                Some(rule) if matches!(rule.specifier, Specifier::Any) => verdict(Action::Ask, rule),
                _ => Verdict::Unruled,
            };
        };
        for part in parts {
            if let Some(rule) = denies.iter().find(|rule| part_matches(rule, part, true)) {
                return verdict(Action::Deny, rule);
            }
            if let Some(rule) = self.file_denied(part, cwd) {
                return Verdict::Deny {
                    reason: format!("denied: it names a file that the rule {} covers", named(rule)),
                };
            }
        }
        if let (Some(rule), Some(part)) =
            (denies.first(), parts.iter().find(|p| p.words.first().is_some_and(Option::is_none)))
        {
            return Verdict::Ask {
                reason: format!(
                    "`{}` runs a program only known when it runs, so it cannot be checked against {}",
                    part.text(),
                    named(rule)
                ),
            };
        }
        for part in parts {
            if let Some(rule) = self.of(tool, Action::Ask).find(|rule| part_matches(rule, part, false)) {
                return verdict(Action::Ask, rule);
            }
        }
        let mut rules = Vec::new();
        for part in parts {
            if part.read_only {
                continue;
            }
            match self.of(tool, Action::Allow).find(|rule| part.plain && part_matches(rule, part, false)) {
                Some(rule) => rules.push(rule.text.clone()),
                None => return Verdict::Unruled,
            }
        }
        rules.dedup();
        if rules.is_empty() { Verdict::Unruled } else { Verdict::Allow { rules } }
    }

    /// A deny rule of the file tools that a word of `part` names, as a path from `cwd`.
    fn file_denied(&self, part: &CommandPart, cwd: &Path) -> Option<&Rule> {
        let arguments = |words: &Vec<Option<String>>| words.iter().skip(1).flatten().cloned().collect::<Vec<_>>();
        let words = (std::iter::once(&part.words).chain(part.unwrapped.iter()).flat_map(arguments))
            .chain(part.files.iter().cloned());
        let mut paths = Vec::new();
        for word in &words.collect::<Vec<_>>() {
            // `--file=.env`, `-f.env` hide a path too: the text after `=` counts as one.
            let candidates = [Some(word.as_str()), word.split_once('=').map(|(_, v)| v)];
            for candidate in candidates.into_iter().flatten() {
                if !candidate.is_empty() && !candidate.starts_with('-') {
                    paths.push(cwd.join(candidate));
                }
            }
        }
        // A word the shell expands (`.e*`, `keys/*.pem`): the names it would match, read from
        // the directory it names (one level, as the shell does for its last component).
        let expanded: Vec<PathBuf> = paths.iter().filter(|p| is_glob(p)).flat_map(|p| expand(p)).collect();
        paths.extend(expanded);
        self.rules
            .iter()
            .filter(|r| r.action == Action::Deny && matches!(r.target, Target::Reads | Target::Edits))
            .find(|rule| paths.iter().any(|path| self.path_matches(rule, path)))
    }
}

fn verdict(action: Action, rule: &Rule) -> Verdict {
    match action {
        Action::Deny => Verdict::Deny { reason: format!("denied by the rule {}", named(rule)) },
        Action::Ask => Verdict::Ask { reason: format!("the rule {} asks", named(rule)) },
        Action::Allow => Verdict::Allow { rules: vec![rule.text.clone()] },
    }
}

/// Whether `rule` (of a shell tool) matches `part`. For a deny rule (`lenient`), the program
/// may also be matched by its file name (`/usr/bin/curl` under `curl:*`) and through
/// wrappers; an allow or ask rule matches the words as written or through wrappers.
fn part_matches(rule: &Rule, part: &CommandPart, lenient: bool) -> bool {
    let forms = std::iter::once(&part.words).chain(part.unwrapped.iter());
    for words in forms {
        if words_match(&rule.specifier, words, false) || (lenient && words_match(&rule.specifier, words, true)) {
            return true;
        }
        if lenient && runs_its_arguments(words) {
            // `eval "curl x"`, `find . -exec curl {} ;`, `watch curl x`: the command is in the
            // arguments, maybe as one quoted word; any place a command could start counts.
            let split: Vec<Option<String>> = words[1..]
                .iter()
                .flat_map(|w| match w {
                    Some(w) => w.split_whitespace().map(|t| Some(t.to_owned())).collect(),
                    None => vec![None],
                })
                .collect();
            if (0..split.len()).any(|i| words_match(&rule.specifier, &split[i..], true)) {
                return true;
            }
        }
    }
    false
}

/// Programs that run a command given in their arguments (not as their first argument, or
/// not as plain words): a deny rule looks for its command anywhere in them.
const RUNNERS: &[&str] = &[
    "eval",
    "exec",
    "find",
    "fd",
    "watch",
    "flock",
    "busybox",
    "parallel",
    "chroot",
    "unshare",
    "nsenter",
    "firejail",
    "strace",
    "ltrace",
    "script",
    "su",
    "ssh",
    "runuser",
    "systemd-run",
    "tmux",
    "screen",
    "expect",
    "entr",
    "ionice",
    "chrt",
    "taskset",
    "cgexec",
    "proxychains",
    "torsocks",
    "faketime",
    "sg",
    "newgrp",
    "catchsegv",
    "valgrind",
];

fn runs_its_arguments(words: &[Option<String>]) -> bool {
    let program = words.first().and_then(|w| w.as_deref()).map(|w| w.rsplit('/').next().unwrap_or(w));
    program.is_some_and(|p| RUNNERS.contains(&p))
}

fn words_match(specifier: &Specifier, words: &[Option<String>], by_file_name: bool) -> bool {
    let word = |i: usize| -> Option<&str> {
        let word = words.get(i)?.as_deref()?;
        Some(if by_file_name && i == 0 { word.rsplit('/').next().unwrap_or(word) } else { word })
    };
    match specifier {
        Specifier::Any => true,
        Specifier::Prefix(prefix) => {
            prefix.len() <= words.len() && prefix.iter().enumerate().all(|(i, p)| word(i) == Some(p.as_str()))
        }
        Specifier::Exact(exact) => {
            exact.len() == words.len() && exact.iter().enumerate().all(|(i, p)| word(i) == Some(p.as_str()))
        }
        Specifier::Glob(_) | Specifier::Domain(_) => false,
    }
}

fn is_glob(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.contains(['*', '?', '[']))
}

/// The entries of `pattern`'s directory whose names its last component matches (dot files
/// included: a deny errs on the side of matching). Nothing when the directory part itself has
/// glob characters or cannot be read.
fn expand(pattern: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(last)) = (pattern.parent(), pattern.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    if is_glob(dir) {
        return Vec::new();
    }
    let Ok(glob) = globset::GlobBuilder::new(last).literal_separator(true).build() else { return Vec::new() };
    let matcher = glob.compile_matcher();
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let names = entries.flatten().map(|e| e.path());
    names.filter(|p| p.file_name().is_some_and(|n| matcher.is_match(n))).take(10_000).collect()
}

/// The host of `url`, lowercased (`None` when it has none).
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split(']').next().map(|h| format!("{h}]"))?
    } else {
        host_port.split(':').next()?.to_owned()
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// The rule an "always allow" answer records for a part of a command: the program and, for
/// programs whose first argument is a subcommand, that subcommand (`npm test:*`,
/// `cargo build:*`, `make:*`); never the whole literal line. `None` when the part has no
/// literal program.
pub fn always_rule(part: &CommandPart) -> Option<String> {
    const SUBCOMMAND_PROGRAMS: &[&str] = &[
        "git",
        "cargo",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "bun",
        "go",
        "docker",
        "kubectl",
        "make",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "dotnet",
        "gradle",
        "mvn",
        "rustup",
        "deno",
        "just",
        "terraform",
        "helm",
        "brew",
        "apt",
        "gh",
    ];
    let words = part.unwrapped.as_ref().unwrap_or(&part.words);
    let program = words.first()?.as_deref()?;
    let quote = |w: &str| {
        if w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%".contains(c)) {
            w.to_owned()
        } else {
            format!("'{}'", w.replace('\'', ""))
        }
    };
    // Shells, interpreters and wrappers run whatever their arguments say: a rule for the
    // program alone would allow anything. An interpreter gets the script it runs
    // (`python3 manage.py:*`), a wrapper nothing (its command, seen through, is the part's
    // `unwrapped` form, used above).
    const INTERPRETERS: &[&str] =
        &["bash", "sh", "zsh", "dash", "ksh", "fish", "python", "python3", "node", "perl", "ruby", "php", "lua"];
    const WRAPPERS: &[&str] = &[
        "env", "xargs", "eval", "exec", "source", ".", "sudo", "doas", "su", "nohup", "setsid", "timeout", "nice",
        "time", "command", "builtin", "watch", "flock", "busybox", "find", "stdbuf", "ionice", "strace",
    ];
    let first = words.get(1).and_then(|w| w.as_deref());
    let base = program.rsplit('/').next().unwrap_or(program);
    match first {
        Some(sub) if SUBCOMMAND_PROGRAMS.contains(&program) && !sub.starts_with('-') && !sub.contains('/') => {
            Some(format!("bash({} {}:*)", quote(program), quote(sub)))
        }
        // `git -C x push`: the subcommand is somewhere after options; no rule that narrow is
        // known, and `git:*` would be far wider than what was approved.
        _ if SUBCOMMAND_PROGRAMS.contains(&program) && first.is_some() => None,
        None if SUBCOMMAND_PROGRAMS.contains(&program) => Some(format!("bash({})", quote(program))),
        Some(script) if INTERPRETERS.contains(&base) && !script.starts_with('-') => {
            Some(format!("bash({} {}:*)", quote(program), quote(script)))
        }
        _ if INTERPRETERS.contains(&base) || WRAPPERS.contains(&base) => None,
        _ => Some(format!("bash({}:*)", quote(program))),
    }
}

#[cfg(test)]
mod tests;
