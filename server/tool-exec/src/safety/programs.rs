//! The data table of programs: the wrappers that run another program (seen through), and for
//! each program known to read only, the flags and arguments that would make it write or run
//! something else. A program that is not in the table is not read-only.

use super::parse::Word;

/// A command with its wrappers taken off.
#[derive(Debug, Default)]
pub(super) struct Resolved {
    /// The program as written (a path keeps its `/`), when known.
    pub program: Option<String>,
    /// Its arguments.
    pub args: Vec<Word>,
    /// Variables the wrappers set (`env NAME=value ...`).
    pub assignments: Vec<String>,
    /// The arguments also come from standard input (`xargs`).
    pub from_stdin: bool,
    /// A script the command runs (`sh -c '...'`), classified like a command line.
    pub script: Option<Word>,
}

/// Takes `env`, `timeout`, `nice`, `xargs`, `busybox`, ... off `words`.
pub(super) fn resolve(words: &[Word]) -> Resolved {
    let mut resolved = Resolved::default();
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let Some(name) = word.lit() else {
            resolved.program = None;
            resolved.args = words[i..].to_vec();
            return resolved;
        };
        let base = name.rsplit('/').next().unwrap_or(name);
        let skip_with_values = |options: &[&str], i: &mut usize| {
            // Options of a wrapper, some of which take a value; stops at the first other word.
            while let Some(w) = words.get(*i).and_then(Word::lit) {
                if options.contains(&w) {
                    *i += 2;
                } else if w.starts_with('-') && w.len() > 1 {
                    *i += 1;
                } else {
                    break;
                }
            }
        };
        match base {
            "env" if !name.contains('/') || name == "/usr/bin/env" => {
                i += 1;
                while let Some(w) = words.get(i).and_then(Word::lit) {
                    if matches!(w, "-u" | "--unset" | "-C" | "--chdir" | "-S" | "--split-string") {
                        i += 2;
                    } else if w.starts_with('-') {
                        i += 1;
                    } else if let Some((var, _)) = w.split_once('=') {
                        resolved.assignments.push(var.to_owned());
                        i += 1;
                    } else {
                        break;
                    }
                }
                if i >= words.len() {
                    resolved.program = Some("env".to_owned());
                    return resolved;
                }
            }
            "timeout" => {
                i += 1;
                skip_with_values(&["-s", "--signal", "-k", "--kill-after"], &mut i);
                i += 1; // the duration
            }
            "nice" => {
                i += 1;
                skip_with_values(&["-n", "--adjustment"], &mut i);
            }
            "ionice" => {
                i += 1;
                skip_with_values(&["-c", "-n", "-p", "-P", "-u"], &mut i);
            }
            "stdbuf" => {
                i += 1;
                skip_with_values(&["-i", "-o", "-e"], &mut i);
            }
            "nohup" | "setsid" | "builtin" => i += 1,
            "time" | "command" | "exec" => {
                i += 1;
                skip_with_values(&["-a"], &mut i);
            }
            "busybox" => i += 1,
            "xargs" => {
                i += 1;
                skip_with_values(&["-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s"], &mut i);
                resolved.from_stdin = true;
                if i >= words.len() {
                    resolved.program = Some("echo".to_owned());
                    return resolved;
                }
            }
            "sh" | "bash" | "dash" | "zsh" | "ksh"
                if !name.contains('/') || name.starts_with("/bin/") || name.starts_with("/usr/bin/") =>
            {
                let args = &words[i + 1..];
                if let Some(at) = args.iter().position(|a| {
                    a.lit().is_some_and(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
                }) {
                    resolved.program = Some(base.to_owned());
                    resolved.script = args.get(at + 1).cloned();
                    resolved.args = args.to_vec();
                    return resolved;
                }
                resolved.program = Some(base.to_owned());
                resolved.args = args.to_vec();
                return resolved;
            }
            _ => {
                resolved.program = Some(name.to_owned());
                resolved.args = words[i + 1..].to_vec();
                return resolved;
            }
        }
    }
    resolved
}

/// Variables that change nothing but formatting, and may be set on a read-only command.
pub(super) fn harmless_variable(name: &str) -> bool {
    matches!(name, "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "CLICOLOR" | "COLUMNS" | "LINES" | "TERM" | "GREP_COLOR")
        || name.starts_with("LC_")
}

fn lits(args: &[Word]) -> impl Iterator<Item = &str> {
    args.iter().map(Word::text)
}

/// A short-option cluster (`-ni`) holds `flag`.
fn cluster_has(arg: &str, flag: char) -> bool {
    arg.starts_with('-') && !arg.starts_with("--") && arg.chars().skip(1).any(|c| c == flag)
}

fn has_long(args: &[Word], long: &str) -> bool {
    lits(args).any(|a| a == long || a.strip_prefix(long).is_some_and(|rest| rest.starts_with('=')))
}

/// Why `program` with `args` is not read-only; `None` when it only reads.
pub(super) fn not_read_only(program: &str, args: &[Word]) -> Option<String> {
    let why = |what: &str| Some(format!("`{program}` {what}"));
    let positional: Vec<&str> = lits(args).filter(|a| !a.starts_with('-')).collect();
    match program {
        "ls" | "cat" | "head" | "tail" | "wc" | "pwd" | "echo" | "printf" | "which" | "type" | "stat" | "du" | "df"
        | "grep" | "egrep" | "fgrep" | "cut" | "diff" | "cmp" | "whoami" | "uname" | "id" | "basename" | "dirname"
        | "realpath" | "readlink" | "true" | "false" | "nl" | "tac" | "rev" | "md5sum" | "sha256sum" | "sha1sum"
        | "sha512sum" | "b2sum" | "cksum" | "column" | "jq" | "less" | "more" | "test" | "[" | "env" | "printenv"
        | "comm" | "paste" | "fold" | "expand" | "unexpand" | "od" | "hexdump" | "xxd" | "strings" | "seq" | "tr"
        | "nproc" | "uptime" | "free" | "locale" | "getconf" => None,
        // Shell builtins that change only the shell itself (`set -- a b` sets `$1`, `$2`).
        "set" | "shift" | ":" => None,
        "tree" if lits(args).any(|a| a == "-o" || a.starts_with("-o")) => why("writes its listing to a file (-o)"),
        "tree" => None,
        "file" if lits(args).any(|a| cluster_has(a, 'C') || a == "--compile") => why("compiles a magic file (-C)"),
        "file" => None,
        "hostname"
            if positional.is_empty()
                && lits(args).all(|a| a.starts_with('-') && !matches!(a, "-F" | "--file" | "-b" | "--boot")) =>
        {
            None
        }
        "hostname" => why("sets the host name"),
        "date"
            if lits(args)
                .any(|a| cluster_has(a, 's') || a.starts_with("--set") || a == "-f" || a.starts_with("--file")) =>
        {
            why("sets the clock (-s/--set)")
        }
        "date" if positional.iter().all(|a| a.starts_with('+')) => None,
        "date" => why("sets the clock"),
        "sort" if lits(args).any(|a| cluster_has(a, 'o') || a.starts_with("--output")) => why("writes to a file (-o)"),
        "sort" if has_long(args, "--compress-program") => why("runs another program (--compress-program)"),
        "sort" => None,
        "uniq" if positional.len() >= 2 => why("writes its second file argument"),
        "uniq" => None,
        "rg" if has_long(args, "--pre") || has_long(args, "--pre-glob") => {
            why("runs another program on each file (--pre)")
        }
        "rg" if lits(args).any(|a| a == "--search-zip" || cluster_has(a, 'z')) => {
            why("runs decompression programs (-z)")
        }
        "rg" => None,
        "find" => lits(args)
            .find(|a| {
                matches!(
                    *a,
                    "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
                )
            })
            .map(|a| format!("`find {a}` writes, deletes or runs other programs")),
        "sed" => sed(args),
        "git" => git(args),
        // `cargo tree`/`metadata` may update Cargo.lock and the registry index.
        "cargo" if positional.is_empty() && lits(args).any(|a| a == "--version" || a == "-V") => None,
        "cargo" => why("builds and runs code, and may update Cargo.lock"),
        // Reads, but over the network, which read-only commands do not reach.
        "aws" => {
            let words: Vec<String> = args.iter().map(|a| a.text().to_owned()).collect();
            if super::aws(&words).kind == super::AwsKind::Read {
                why("reads cloud resources over the network")
            } else {
                why("may change cloud resources")
            }
        }
        _ => why("may change files or state (not a known read-only command)"),
    }
}

/// `sed` reads only when it edits no file in place and its script only prints and substitutes
/// (no `w`, `W`, `r`, `R`, `e` commands, no `s///w` or `s///e` flags).
fn sed(args: &[Word]) -> Option<String> {
    let mut scripts = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "--in-place"
            || text.starts_with("--in-place=")
            || (cluster_has(text, 'i') && !text.starts_with("--"))
        {
            return Some("`sed` edits files in place (-i)".to_owned());
        }
        if text == "-e" || text == "--expression" {
            scripts.extend(args.get(i + 1).cloned());
            i += 2;
            continue;
        }
        if text == "-f" || text.starts_with("--file") || cluster_has(text, 'f') {
            return Some("`sed` runs a script file (-f) that is not checked".to_owned());
        }
        if !text.starts_with('-') && scripts.is_empty() {
            scripts.push(arg.clone());
        }
        i += 1;
    }
    for script in &scripts {
        let Some(script) = script.lit() else { return Some("`sed` has a script that is not known".to_owned()) };
        if !sed_script_reads_only(script) {
            return Some("`sed` writes files or runs commands from its script (w, r, e)".to_owned());
        }
    }
    None
}

/// Whether a sed script only prints, deletes and substitutes in its output.
fn sed_script_reads_only(script: &str) -> bool {
    let mut chars = script.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            's' | 'y' => {
                let Some(delimiter) = chars.next() else { return false };
                // Pattern and replacement (`y` has two parts too).
                for _ in 0..2 {
                    loop {
                        match chars.next() {
                            None => return false,
                            Some('\\') => {
                                chars.next();
                            }
                            Some(c) if c == delimiter => break,
                            Some(_) => {}
                        }
                    }
                }
                if c == 's' {
                    while let Some(flag) = chars.peek().copied() {
                        match flag {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => {
                                chars.next();
                            }
                            'w' | 'W' | 'e' => return false,
                            _ => break,
                        }
                    }
                }
            }
            // Commands that write or read other files, or run a command.
            'w' | 'W' | 'r' | 'R' | 'e' => return false,
            // `a`, `i`, `c` take text to the end of the line.
            'a' | 'i' | 'c' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            // Labels and branches name a label.
            ':' | 'b' | 't' | 'T' => {
                for c in chars.by_ref() {
                    if c == ';' || c == '\n' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    true
}

/// Git subcommands that only read, and the options that would make them write or run
/// something.
fn git(args: &[Word]) -> Option<String> {
    let mut i = 0;
    // Global options before the subcommand.
    while let Some(arg) = args.get(i).map(Word::text) {
        match arg {
            "-c" | "--config-env" | "--exec-path" => {
                return Some("`git -c` changes its configuration (it can run programs)".to_owned());
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            a if a.starts_with("--exec-path=") || a.starts_with("--config-env=") => {
                return Some("`git` with another configuration or exec path can run programs".to_owned());
            }
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = args.get(i).map(Word::text).unwrap_or_default();
    let rest = &args[(i + 1).min(args.len())..];
    let positional: Vec<&str> = lits(rest).filter(|a| !a.starts_with('-')).collect();
    if has_long(rest, "--output") || lits(rest).any(|a| a == "-o" && sub == "grep") {
        return Some(format!("`git {sub} --output` writes a file"));
    }
    if has_long(rest, "--ext-diff") {
        return Some(format!("`git {sub} --ext-diff` runs an external diff program"));
    }
    match sub {
        "status" | "log" | "diff" | "show" | "blame" | "ls-files" | "rev-parse" | "describe" | "shortlog"
        | "cat-file" | "ls-tree" | "rev-list" | "merge-base" | "name-rev" | "whatchanged" | "annotate"
        | "count-objects" | "cherry" | "version" => None,
        "grep" if has_long(rest, "--open-files-in-pager") || lits(rest).any(|a| a.starts_with("-O")) => {
            Some("`git grep -O` runs a pager program".to_owned())
        }
        "grep" => None,
        "reflog" if positional.first().is_none_or(|p| *p == "show") => None,
        "branch" | "tag" | "remote"
            if positional.is_empty()
                && lits(rest)
                    .all(|a| matches!(a, "-v" | "-vv" | "-a" | "-r" | "--list" | "-l" | "--all" | "--verbose")) =>
        {
            None
        }
        "stash" if positional.first().is_some_and(|p| matches!(*p, "list" | "show")) => None,
        "config" if lits(rest).any(|a| matches!(a, "--get" | "--list" | "-l" | "--get-all" | "--get-regexp")) => None,
        "" => Some("`git` without a subcommand".to_owned()),
        _ => Some(format!("`git {sub}` may change the repository")),
    }
}
