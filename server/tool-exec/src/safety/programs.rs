//! The data table of programs: the wrappers that run another program (seen through, their
//! options read from their own tables), and for each program known to read only, the options
//! and operands that would make it write or run something else, each from the program's
//! manual. Options are read the way the program reads them (`getopt.rs`). A program that is
//! not in the table is not read-only.

use super::getopt::{Item, Opt, Spec, operand_like, operands, read};
use super::parse::Word;
use super::tables::{
    COMMAND, DATE, ENV, EXEC, FILE, HOSTNAME, IONICE, LESS, NICE, RG, SETSID, SHELL, SORT, STDBUF, TIME, TIMEOUT, UNIQ,
    XARGS,
};

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
    /// A script the command runs (`sh -c '...'`, `env -S '...'`), classified like a command
    /// line.
    pub script: Option<Word>,
    /// Why a wrapper itself is not read-only (`env -S`, `time -o`, `bash -i`).
    pub asks: Vec<String>,
}

/// What a wrapper's options say: unknown or dynamic words, and the options that make the
/// wrapper itself run or write something.
fn wrapper_asks(name: &str, items: &[Item], doors: &[(Option<char>, &str, &str)], resolved: &mut Resolved) {
    for item in items {
        match item {
            Item::Dynamic(text) => {
                resolved.asks.push(format!("`{name}` has an argument only known when it runs (`{text}`)"))
            }
            Item::Opt(Opt::Unknown(option), _) => {
                resolved.asks.push(format!("`{name}` has an option that is not known (`{option}`)"))
            }
            Item::Opt(opt, _) => {
                if let Some((_, _, why)) = doors.iter().find(|(short, long, _)| opt.is(*short, long)) {
                    resolved.asks.push(format!("`{name}` {why}"));
                }
            }
            Item::Operand(_) => {}
        }
    }
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
        let rest = &words[i + 1..];
        let wrapper = |spec: &Spec, doors: &[(Option<char>, &str, &str)], resolved: &mut Resolved| {
            let (items, end) = read(spec, rest);
            wrapper_asks(base, &items, doors, resolved);
            (items, i + 1 + end)
        };
        match base {
            "env" if !name.contains('/') || name == "/usr/bin/env" => {
                // In another directory, `git` finds another repository (a bare one runs its
                // own `core.fsmonitor`).
                let doors = [(Some('C'), "chdir", "runs the command in another directory (-C)")];
                let (items, end) = wrapper(&ENV, &doors, &mut resolved);
                i = end;
                while let Some((var, _)) = words.get(i).and_then(Word::lit).and_then(|w| w.split_once('=')) {
                    resolved.assignments.push(var.to_owned());
                    i += 1;
                }
                let split = items.iter().find_map(|item| match item {
                    Item::Opt(opt, value) if opt.is(Some('S'), "split-string") => Some(value.clone()),
                    _ => None,
                });
                if let Some(split) = split {
                    // `env -S 'cmd args' more`: the string, split, then the operands.
                    resolved.asks.push("`env -S` splits a string into a command of its own".to_owned());
                    resolved.program = Some("env".to_owned());
                    resolved.script = split.and_then(|s| {
                        words[i..]
                            .iter()
                            .map(|w| w.lit().map(shell_quote))
                            .collect::<Option<Vec<_>>>()
                            .map(|more| Word::Lit(std::iter::once(s).chain(more).collect::<Vec<_>>().join(" ")))
                    });
                    if resolved.script.is_none() {
                        resolved.script = Some(Word::Dyn("env -S".to_owned()));
                    }
                    return resolved;
                }
                if i >= words.len() {
                    resolved.program = Some("env".to_owned());
                    return resolved;
                }
            }
            "timeout" => {
                let (_, end) = wrapper(&TIMEOUT, &[], &mut resolved);
                i = end + 1; // the duration
            }
            "nice" => {
                // The old form, `nice -10 command`.
                if rest.first().and_then(Word::lit).is_some_and(|w| {
                    w.len() > 1 && w.trim_start_matches('-').chars().all(|c| c.is_ascii_digit()) && w.starts_with('-')
                }) {
                    i += 2;
                } else {
                    i = wrapper(&NICE, &[], &mut resolved).1;
                }
            }
            "ionice" => i = wrapper(&IONICE, &[], &mut resolved).1,
            "stdbuf" => i = wrapper(&STDBUF, &[], &mut resolved).1,
            "setsid" => i = wrapper(&SETSID, &[], &mut resolved).1,
            "nohup" => {
                resolved.asks.push("`nohup` writes nohup.out when its output is a terminal".to_owned());
                i += 1;
            }
            "builtin" | "busybox" => i += 1,
            "time" => {
                i = wrapper(&TIME, &[(Some('o'), "output", "writes its report to a file (-o)")], &mut resolved).1;
            }
            "exec" => i = wrapper(&EXEC, &[], &mut resolved).1,
            "command" => {
                let (items, end) = wrapper(&COMMAND, &[], &mut resolved);
                // `command -v x` only says what `x` is.
                if items.iter().any(|item| matches!(item, Item::Opt(Opt::Short('v' | 'V'), _))) {
                    resolved.program = Some("command".to_owned());
                    return resolved;
                }
                i = end;
            }
            "xargs" => {
                let doors =
                    [(None, "process-slot-var", "sets a variable in the commands it runs (--process-slot-var)")];
                i = wrapper(&XARGS, &doors, &mut resolved).1;
                resolved.from_stdin = true;
                if i >= words.len() {
                    resolved.program = Some("echo".to_owned());
                    return resolved;
                }
            }
            "sh" | "bash" | "dash" | "zsh" | "ksh"
                if !name.contains('/') || name.starts_with("/bin/") || name.starts_with("/usr/bin/") =>
            {
                // `+x` turns an option off: the same letters, for what they do here.
                let plussed: Vec<Word> = rest
                    .iter()
                    .map(|w| match w.lit().and_then(|t| t.strip_prefix('+')) {
                        Some(letters) if !letters.is_empty() => Word::Lit(format!("-{letters}")),
                        _ => w.clone(),
                    })
                    .collect();
                let (items, end) = read(&SHELL, &plussed);
                let doors = [
                    (Some('i'), "", "runs as an interactive shell, which runs start-up files"),
                    (Some('l'), "login", "runs as a login shell, which runs start-up files"),
                    (Some('s'), "", "reads commands from its input"),
                    (None, "rcfile", "runs a start-up file (--rcfile)"),
                    (None, "init-file", "runs a start-up file (--init-file)"),
                    (None, "debugger", "loads a debugger"),
                ];
                wrapper_asks(base, &items, &doors, &mut resolved);
                resolved.program = Some(base.to_owned());
                resolved.args = rest.to_vec();
                if items.iter().any(|item| matches!(item, Item::Opt(Opt::Short('c'), _))) {
                    resolved.script = Some(rest.get(end).cloned().unwrap_or(Word::Lit(String::new())));
                }
                return resolved;
            }
            _ => {
                resolved.program = Some(name.to_owned());
                resolved.args = rest.to_vec();
                return resolved;
            }
        }
    }
    resolved
}

/// `word` as a shell word that reads back as itself.
fn shell_quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "./=_-:,+@%".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Variables that change nothing but formatting, and may be set on a read-only command.
pub(super) fn harmless_variable(name: &str) -> bool {
    matches!(name, "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "CLICOLOR" | "COLUMNS" | "LINES" | "TERM" | "GREP_COLOR")
        || name.starts_with("LC_")
}

/// Reads `args` with `spec` and finds what makes `program` not read-only: a dynamic word (it
/// may be any option), an option the table does not know, or one of `doors`.
fn tabled(
    program: &str,
    spec: &Spec,
    args: &[Word],
    doors: &[(Option<char>, &str, &str)],
) -> Result<Vec<Item>, String> {
    let (items, _) = read(spec, args);
    for item in &items {
        match item {
            Item::Dynamic(text) if !operand_like(text) => {
                return Err(format!("`{program}` has an argument only known when it runs (`{text}`)"));
            }
            Item::Dynamic(_) => {}
            Item::Opt(Opt::Unknown(option), _) => {
                return Err(format!("`{program}` has an option that is not known (`{option}`)"));
            }
            Item::Opt(opt, _) => {
                if let Some((_, _, why)) = doors.iter().find(|(short, long, _)| opt.is(*short, long)) {
                    return Err(format!("`{program}` {why}"));
                }
            }
            Item::Operand(_) => {}
        }
    }
    Ok(items)
}

/// Why `program` with `args` is not read-only; `None` when it only reads.
pub(super) fn not_read_only(program: &str, args: &[Word]) -> Option<String> {
    let why = |what: &str| Some(format!("`{program}` {what}"));
    match program {
        // No option or operand of these writes a file or runs another program.
        "ls" | "cat" | "head" | "tail" | "wc" | "pwd" | "echo" | "which" | "type" | "stat" | "du" | "df" | "grep"
        | "egrep" | "fgrep" | "cut" | "diff" | "cmp" | "whoami" | "uname" | "id" | "basename" | "dirname"
        | "realpath" | "readlink" | "true" | "false" | "nl" | "tac" | "rev" | "md5sum" | "sha256sum" | "sha1sum"
        | "sha512sum" | "b2sum" | "cksum" | "column" | "jq" | "more" | "test" | "[" | "env" | "printenv" | "comm"
        | "paste" | "fold" | "expand" | "unexpand" | "od" | "hexdump" | "strings" | "seq" | "tr" | "nproc"
        | "uptime" | "free" | "locale" | "getconf" | "command" => None,
        // Shell builtins that change only the shell itself (`set -- a b` sets `$1`, `$2`).
        "set" | "shift" | ":" => None,
        // `printf -v NAME` sets a shell variable (`PATH`, for the commands after it).
        "printf" => match args.first() {
            Some(Word::Dyn(text)) => why(&format!("has a format only known when it runs (`{text}`)")),
            Some(Word::Lit(first)) if first.starts_with("-v") => why("sets a shell variable (-v)"),
            _ => None,
        },
        "sort" => {
            let doors = [
                (Some('o'), "output", "writes to a file (-o)"),
                (None, "compress-program", "runs another program (--compress-program)"),
            ];
            tabled(program, &SORT, args, &doors).err()
        }
        "uniq" => match tabled(program, &UNIQ, args, &[]) {
            Err(why) => Some(why),
            Ok(items) if operands(&items).count() >= 2 => why("writes its second file argument"),
            Ok(_) => None,
        },
        "date" => match tabled(program, &DATE, args, &[(Some('s'), "set", "sets the clock (-s/--set)")]) {
            Err(why) => Some(why),
            Ok(items) if operands(&items).any(|o| !o.starts_with('+')) => why("sets the clock"),
            Ok(_) => None,
        },
        "hostname" => {
            let doors =
                [(Some('F'), "file", "sets the host name from a file"), (Some('b'), "boot", "sets the host name")];
            match tabled(program, &HOSTNAME, args, &doors) {
                Err(why) => Some(why),
                Ok(items) if operands(&items).next().is_some() => why("sets the host name"),
                Ok(_) => None,
            }
        }
        "file" => {
            let doors = [
                (Some('C'), "compile", "compiles a magic file (-C)"),
                (Some('p'), "preserve-date", "sets the files' access times back (-p)"),
            ];
            tabled(program, &FILE, args, &doors).err()
        }
        "less" => {
            let doors = [
                (Some('o'), "log-file", "copies its input to a file (-o)"),
                (Some('O'), "LOG-FILE", "copies its input to a file (-O)"),
                (Some('k'), "lesskey-file", "reads key bindings, which can set LESSOPEN (-k)"),
                (None, "lesskey-src", "reads key bindings, which can set LESSOPEN"),
                (None, "lesskey-content", "reads key bindings, which can set LESSOPEN"),
            ];
            match tabled(program, &LESS, args, &doors) {
                Err(why) => Some(why),
                Ok(items) => operands(&items)
                    .filter_map(|o| o.strip_prefix('+'))
                    .find(|command| !less_start_command_reads(command))
                    .map(|command| format!("`less +{command}` runs a command of its own at start")),
            }
        }
        "xxd" => xxd(args),
        "tree" => tree(args),
        "rg" => rg(args),
        "find" => find(args),
        "sed" => super::sed::check(args),
        "git" => super::git::check(args),
        // `cargo tree`/`metadata` may update Cargo.lock and the registry index.
        "cargo" if args.iter().all(|a| matches!(a.text(), "--version" | "-V")) && !args.is_empty() => None,
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

/// `less +COMMAND`: a line number, a search, or going to the end or following.
fn less_start_command_reads(command: &str) -> bool {
    let command = command.trim_start_matches('+');
    command.is_empty()
        || command.chars().all(|c| c.is_ascii_digit())
        || command.starts_with('/')
        || command.starts_with('?')
        || matches!(command, "G" | "g" | "F" | "N" | "n")
}

/// `xxd [options] [infile [outfile]]`: a second operand is written. Its own option parser:
/// `-c 8`, `-c8`, `-cols 8`, and `--` ends the options.
fn xxd(args: &[Word]) -> Option<String> {
    const VALUES: &[(&str, &str)] =
        &[("c", "ols"), ("g", "roupsize"), ("l", "en"), ("n", "ame"), ("o", "ffset"), ("s", "eek"), ("R", "")];
    let mut operands = 0;
    let mut options = true;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let Some(text) = word.lit() else {
            if operand_like(word.text()) {
                operands += 1;
                continue;
            }
            return Some(format!("`xxd` has an argument only known when it runs (`{}`)", word.text()));
        };
        if options && text == "--" {
            options = false;
        } else if options && text.len() > 1 && text.starts_with('-') {
            let takes_next = VALUES.iter().any(|(letter, long)| {
                text[1..]
                    .strip_prefix(letter)
                    .is_some_and(|rest| rest.is_empty() || (!long.is_empty() && long.starts_with(rest)))
            });
            i += usize::from(takes_next);
        } else {
            operands += 1;
        }
    }
    (operands >= 2).then(|| "`xxd` writes its second file argument".to_owned())
}

/// `tree -o FILE` writes its listing; `-R` (with `-H`) writes `00Tree.html` in each directory.
/// Its own parser: every letter of a cluster is an option, and `-L`, `-P`, `-I`, `-H`, `-T`
/// take the next word.
fn tree(args: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let Some(text) = word.lit() else {
            if operand_like(word.text()) {
                continue;
            }
            return Some(format!("`tree` has an argument only known when it runs (`{}`)", word.text()));
        };
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            if ["output", "outfile"].iter().any(|o| o.starts_with(long.split('=').next().unwrap_or(long))) {
                return Some("`tree` writes its listing to a file".to_owned());
            }
            if !long.contains('=')
                && ["charset", "filelimit", "timefmt", "sort", "hintro", "houtro", "infofile", "gitfile"]
                    .contains(&long)
            {
                i += 1;
            }
        } else if let Some(letters) = text.strip_prefix('-') {
            for c in letters.chars() {
                match c {
                    'o' => return Some("`tree` writes its listing to a file (-o)".to_owned()),
                    'R' => return Some("`tree -R` writes a listing file in each directory".to_owned()),
                    'L' | 'P' | 'I' | 'H' | 'T' => i += 1,
                    _ => {}
                }
            }
        }
    }
    None
}

/// ripgrep: `--pre` runs a program on each file, `-z` runs decompressors, `--hostname-bin`
/// runs a program. Long names are matched by prefix, whatever rg itself accepts.
fn rg(args: &[Word]) -> Option<String> {
    const DOORS: &[(&str, &str)] = &[
        ("pre", "runs another program on each file (--pre)"),
        ("pre-glob", "runs another program on each file (--pre)"),
        ("search-zip", "runs decompression programs (-z)"),
        ("hostname-bin", "runs another program (--hostname-bin)"),
    ];
    if let Some(dynamic) = args.iter().find(|a| a.lit().is_none() && !operand_like(a.text())) {
        return Some(format!("`rg` has an argument only known when it runs (`{}`)", dynamic.text()));
    }
    for text in args.iter().map(Word::text).take_while(|t| *t != "--") {
        let Some(long) = text.strip_prefix("--") else { continue };
        let name = long.split_once('=').map_or(long, |(name, _)| name);
        if let Some((_, why)) = DOORS.iter().find(|(door, _)| !name.is_empty() && door.starts_with(name)) {
            return Some(format!("`rg` {why}"));
        }
    }
    let shorts: Vec<Word> = args.iter().filter(|a| !a.text().starts_with("--")).cloned().collect();
    let (items, _) = read(&RG, &shorts);
    items.iter().find_map(|item| match item {
        Item::Opt(Opt::Short('z'), _) => Some("`rg` runs decompression programs (-z)".to_owned()),
        Item::Opt(Opt::Unknown(option), _) => Some(format!("`rg` has an option that is not known (`{option}`)")),
        _ => None,
    })
}

/// `find`: the actions that run programs, write files or delete.
fn find(args: &[Word]) -> Option<String> {
    if let Some(dynamic) = args.iter().find(|a| a.lit().is_none() && !operand_like(a.text())) {
        return Some(format!("`find` has an argument only known when it runs (`{}`)", dynamic.text()));
    }
    args.iter()
        .map(Word::text)
        .find(|a| {
            matches!(
                *a,
                "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
            )
        })
        .map(|a| format!("`find {a}` writes, deletes or runs other programs"))
}
