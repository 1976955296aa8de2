//! What must never run (catastrophic targets, whoever asks, in every mode) and what destroys
//! data (asks with a specific reason in every mode but yolo).

use super::parse::Word;

/// System directories whose recursive removal or re-permissioning is never wanted.
const SYSTEM: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/snap",
    "/mnt",
    "/media",
    "/Users",
    "/System",
    "/Library",
    "/Applications",
];

/// A target normalised as the shell and the kernel would read it: `//`, `/.`, trailing `/`
/// and `..` folded; `~`, `$HOME` and `${HOME}` as `~`.
fn normalise(raw: &str) -> String {
    let mut text = raw.trim().to_owned();
    for home in ["${HOME}", "$HOME"] {
        if let Some(rest) = text.strip_prefix(home) {
            text = format!("~{rest}");
        }
    }
    let (prefix, path) = if let Some(rest) = text.strip_prefix('~') {
        ("~", rest.to_owned())
    } else if text.starts_with('/') {
        ("/", text.clone())
    } else {
        ("", text.clone())
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    match prefix {
        "~" if joined.is_empty() => "~".to_owned(),
        "~" => format!("~/{joined}"),
        "/" => format!("/{joined}"),
        _ if joined.is_empty() => ".".to_owned(),
        _ => joined,
    }
}

/// Why removing (or re-permissioning) `target` recursively is catastrophic, if it is: the
/// root, the home directory, a system directory, everything in one of them (`/*`, `~/*`), the
/// workspace itself (`.`, `*`) or its `.git`.
pub(super) fn catastrophic_target(target: &Word) -> Option<&'static str> {
    let raw = target.text().trim_matches('"');
    let normal = normalise(raw);
    let glob_of = normal.strip_suffix("/*").map(str::to_owned);
    let is_system =
        |p: &str| SYSTEM.contains(&p) || (p.starts_with('/') && p[1..].split('/').count() == 1 && p.contains('*'));
    if normal == "/" || glob_of.as_deref() == Some("") || normal == "/*" {
        return Some("the root of the file system");
    }
    if normal == "~" || normal == "~/*" || normal.starts_with("~/*") {
        return Some("the home directory");
    }
    if is_system(&normal) || glob_of.as_deref().is_some_and(is_system) {
        return Some("a system directory");
    }
    if matches!(normal.as_str(), "." | "*" | ".*" | "./*") || raw == "./" {
        return Some("the whole workspace");
    }
    if normal == ".git" || normal.ends_with("/.git") {
        return Some("the repository's history (.git)");
    }
    None
}

fn recursive(args: &[Word]) -> bool {
    args.iter().map(Word::text).any(|a| {
        a == "--recursive" || (a.starts_with('-') && !a.starts_with("--") && (a.contains('r') || a.contains('R')))
    })
}

fn targets(args: &[Word]) -> impl Iterator<Item = &Word> {
    let mut options = true;
    args.iter().filter(move |a| {
        if a.text() == "--" {
            options = false;
            return false;
        }
        !(options && a.text().starts_with('-'))
    })
}

/// Why `program args` must never run, if so. `stdin` holds what an earlier stage of the
/// pipeline prints, when known (for `echo / | xargs rm -rf`).
pub(super) fn refused(program: &str, args: &[Word], stdin: &[Word]) -> Option<String> {
    let base = program.rsplit('/').next().unwrap_or(program);
    let all_targets = || targets(args).chain(stdin.iter());
    match base {
        "sudo" | "su" | "doas" | "pkexec" | "run0" => Some(format!("`{base}` runs commands as another user")),
        "rm" if args.iter().any(|a| a.text() == "--no-preserve-root") => Some("`rm --no-preserve-root`".to_owned()),
        "rm" if recursive(args) => {
            all_targets().find_map(catastrophic_target).map(|what| format!("recursive removal of {what}"))
        }
        "find" if args.iter().any(|a| a.text() == "-delete") => {
            let start = args.iter().take_while(|a| !a.text().starts_with('-')).collect::<Vec<_>>();
            // Over the workspace it only asks (it deletes what it finds, not the workspace).
            start
                .into_iter()
                .filter_map(catastrophic_target)
                .find(|what| !what.starts_with("the whole workspace"))
                .map(|what| format!("`find -delete` over {what}"))
        }
        "chmod" | "chown" | "chgrp" if recursive(args) => all_targets()
            .filter(|t| !t.text().contains(':') || base != "chown")
            .find_map(catastrophic_target)
            .map(|what| format!("recursive `{base}` of {what}")),
        p if p.starts_with("mkfs") => Some("formats a file system".to_owned()),
        "dd" if args.iter().any(|a| a.text().starts_with("of=/dev/") && a.text() != "of=/dev/null") => {
            Some("writes to a raw device".to_owned())
        }
        "shred" | "wipefs" => Some(format!("`{base}` destroys data beyond recovery")),
        "shutdown" | "reboot" | "halt" | "poweroff" | "init" => Some("stops the machine".to_owned()),
        "kill" | "pkill"
            if args.iter().any(|a| a.text() == "-1" || a.text() == "-9" && args.iter().any(|b| b.text() == "-1")) =>
        {
            Some("kills every process".to_owned())
        }
        _ => None,
    }
}

/// Why `program args` destroys data, if it does (asks even where commands would not).
pub(super) fn data_loss(program: &str, args: &[Word]) -> Option<String> {
    let base = program.rsplit('/').next().unwrap_or(program);
    let texts: Vec<&str> = args.iter().map(Word::text).collect();
    let has = |flag: &str| texts.contains(&flag);
    match base {
        "rm" if recursive(args) => Some("deletes a directory tree".to_owned()),
        "find" if has("-delete") => Some("deletes the files it finds".to_owned()),
        "git" => {
            let sub_at = texts.iter().position(|a| !a.starts_with('-'))?;
            let (sub, rest) = (texts[sub_at], &texts[sub_at + 1..]);
            let flag = |f: &str| {
                rest.iter().any(|a| {
                    *a == f || (f.len() == 2 && a.starts_with('-') && !a.starts_with("--") && a.contains(&f[1..]))
                })
            };
            match sub {
                "clean" if flag("-f") || flag("--force") => {
                    Some("deletes untracked files (and ignored ones with -x)".to_owned())
                }
                "reset" if flag("--hard") || flag("--merge") || flag("--keep") => {
                    Some("discards uncommitted changes".to_owned())
                }
                "push"
                    if flag("-f")
                        || flag("--force")
                        || rest.iter().any(|a| {
                            a.starts_with("--force-with-lease")
                                || a.starts_with("--mirror")
                                || a.starts_with('+')
                                || *a == "--delete"
                                || *a == "-d"
                        }) =>
                {
                    Some("rewrites the remote's history".to_owned())
                }
                "checkout" | "restore"
                    if rest.iter().any(|a| matches!(*a, "." | "*" | ":/")) || flag("-f") || flag("--force") =>
                {
                    Some("discards uncommitted changes".to_owned())
                }
                "branch"
                    if flag("-D")
                        || (flag("-d") && flag("-f"))
                        || rest.iter().any(|a| *a == "--delete" && rest.contains(&"--force")) =>
                {
                    Some("deletes a branch with unmerged work".to_owned())
                }
                "stash" if rest.first().is_some_and(|a| matches!(*a, "drop" | "clear")) => {
                    Some("deletes stashed changes".to_owned())
                }
                "reflog" if rest.first().is_some_and(|a| matches!(*a, "expire" | "delete")) => {
                    Some("deletes the reflog that recovers lost commits".to_owned())
                }
                "gc" if rest.iter().any(|a| a.starts_with("--prune")) => Some("deletes unreachable commits".to_owned()),
                "filter-branch" | "filter-repo" => Some("rewrites the repository's history".to_owned()),
                "update-ref" if flag("-d") => Some("deletes a ref".to_owned()),
                _ => None,
            }
        }
        _ => None,
    }
}
