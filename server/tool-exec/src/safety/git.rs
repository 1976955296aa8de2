//! `git`: the subcommands that only read, and what makes them run something or write. Global
//! options other than a few harmless ones ask: `-C`, `--git-dir`, `--work-tree` and `--bare`
//! point git at another repository (a bare one in the tree runs its own `core.fsmonitor` and
//! hooks), `-c` / `--config-env` / `--exec-path` change what it runs, `-p` starts a pager.
//! Subcommand options are matched by prefix (git's parse-options accepts unique
//! abbreviations), so `--open-files` is `--open-files-in-pager` and `--out` is `--output`.

use super::parse::Word;

/// Global options that change nothing git runs or where it looks.
const HARMLESS_GLOBAL: &[&str] = &[
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-lazy-fetch",
    "--no-advice",
    "--version",
    "--html-path",
    "--man-path",
    "--info-path",
];

/// Options of any subcommand that write a file or run a program.
const DOORS: &[(&str, &str)] = &[
    ("output", "writes a file (--output)"),
    ("ext-diff", "runs an external diff program (--ext-diff)"),
    ("open-files-in-pager", "runs a pager program (-O)"),
    ("edit", "opens an editor"),
    ("exec", "runs a program"),
    ("upload-pack", "runs a program"),
    ("receive-pack", "runs a program"),
];

/// `git config` options that change the configuration.
const CONFIG_WRITES: &[&str] =
    &["add", "unset", "unset-all", "replace-all", "rename-section", "remove-section", "edit"];

/// Whether `arg` (`--name` or `--name=value`) is a prefix of the long option `long`.
fn abbreviates(arg: &str, long: &str) -> bool {
    arg.strip_prefix("--")
        .map(|a| a.split_once('=').map_or(a, |(name, _)| name))
        .is_some_and(|name| !name.is_empty() && long.starts_with(name))
}

/// Why `git args` is not read-only; `None` when it only reads.
pub(super) fn check(args: &[Word]) -> Option<String> {
    if let Some(dynamic) = args.iter().find(|a| a.lit().is_none() && !super::getopt::operand_like(a.text())) {
        return Some(format!("`git` has an argument only known when it runs (`{}`)", dynamic.text()));
    }
    let texts: Vec<&str> = args.iter().map(Word::text).collect();
    let at = texts.iter().position(|a| !a.starts_with('-')).unwrap_or(texts.len());
    if let Some(global) = texts[..at].iter().find(|a| !HARMLESS_GLOBAL.contains(a)) {
        return Some(format!(
            "`git {global}` points git at another repository or configuration, or runs a pager or program"
        ));
    }
    let sub = texts.get(at).copied().unwrap_or_default();
    let rest = &texts[(at + 1).min(texts.len())..];
    let options_end = rest.iter().position(|a| *a == "--").unwrap_or(rest.len());
    let options = &rest[..options_end];
    let positional: Vec<&str> = rest.iter().filter(|a| !a.starts_with('-')).copied().collect();
    for (long, what) in DOORS {
        if options.iter().any(|a| abbreviates(a, long)) {
            return Some(format!("`git {sub}` {what}"));
        }
    }
    match sub {
        "status" | "log" | "diff" | "show" | "blame" | "ls-files" | "rev-parse" | "describe" | "shortlog"
        | "cat-file" | "ls-tree" | "rev-list" | "merge-base" | "name-rev" | "whatchanged" | "annotate"
        | "count-objects" | "cherry" | "version" => None,
        "grep" if options.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && short_has(a, 'O')) => {
            Some("`git grep -O` runs a pager program".to_owned())
        }
        "grep" => None,
        "reflog" if positional.first().is_none_or(|p| *p == "show") => None,
        "branch" | "tag" | "remote"
            if positional.is_empty()
                && rest
                    .iter()
                    .all(|a| matches!(*a, "-v" | "-vv" | "-a" | "-r" | "--list" | "-l" | "--all" | "--verbose")) =>
        {
            None
        }
        "stash" if positional.first().is_some_and(|p| matches!(*p, "list" | "show")) => None,
        "config" => config(options, &positional),
        // `git --version`, `git --help`: they print.
        "" if at > 0 => None,
        "" => Some("`git` without a subcommand".to_owned()),
        _ => Some(format!("`git {sub}` may change the repository")),
    }
}

/// A short-option cluster of `git grep` holds `flag` before any option that takes the rest of
/// the word as its value (`-e`, `-f`, `-A3`, ...).
fn short_has(arg: &str, flag: char) -> bool {
    for c in arg.chars().skip(1) {
        if c == flag {
            return true;
        }
        if matches!(c, 'e' | 'f' | 'A' | 'B' | 'C' | 'm' | 'j') {
            return false;
        }
    }
    false
}

/// `git config` reads when it only gets, lists or shows.
fn config(options: &[&str], positional: &[&str]) -> Option<String> {
    let writes = options.iter().any(|a| {
        *a == "-e"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('e'))
            || CONFIG_WRITES.iter().any(|long| abbreviates(a, long))
    });
    let reads = options.iter().any(|a| {
        matches!(*a, "-l" | "--list" | "--get" | "--get-all" | "--get-regexp" | "--get-urlmatch" | "--get-color")
    }) || positional.first().is_some_and(|p| matches!(*p, "get" | "list"));
    if reads
        && !writes
        && !positional
            .first()
            .is_some_and(|p| matches!(*p, "set" | "unset" | "edit" | "rename-section" | "remove-section"))
    {
        None
    } else {
        Some("`git config` may change the configuration or open an editor".to_owned())
    }
}
