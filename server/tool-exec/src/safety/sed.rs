//! `sed`: its options (GNU sed's table) and its script, parsed command by command the way sed
//! parses it, so that the commands that run a program or write a file (`e`, `w`, `W`, and the
//! `e` and `w` flags of `s`) are found wherever they are: after an address, a `!`, inside a
//! block, in a second `-e`. Anything the parser does not know makes the script "not read-only".

use super::getopt::{Arg, Item, Opt, Spec, operand_like, read};
use super::parse::Word;

const SPEC: Spec = Spec {
    short: &[
        ('n', Arg::No),
        ('e', Arg::Required),
        ('f', Arg::Required),
        ('i', Arg::Optional),
        ('l', Arg::Required),
        ('E', Arg::No),
        ('r', Arg::No),
        ('s', Arg::No),
        ('u', Arg::No),
        ('z', Arg::No),
        ('b', Arg::No),
    ],
    long: &[
        ("quiet", Arg::No),
        ("silent", Arg::No),
        ("debug", Arg::No),
        ("expression", Arg::Required),
        ("file", Arg::Required),
        ("follow-symlinks", Arg::No),
        ("in-place", Arg::Optional),
        ("line-length", Arg::Required),
        ("null-data", Arg::No),
        ("zero-terminated", Arg::No),
        ("posix", Arg::No),
        ("regexp-extended", Arg::No),
        ("separate", Arg::No),
        ("sandbox", Arg::No),
        ("unbuffered", Arg::No),
        ("binary", Arg::No),
        ("help", Arg::No),
        ("version", Arg::No),
    ],
    stop_at_operand: false,
};

/// Why `sed args` is not read-only; `None` when it only prints.
pub(super) fn check(args: &[Word]) -> Option<String> {
    let (items, _) = read(&SPEC, args);
    let mut scripts = Vec::new();
    let mut first_operand_is_script = true;
    for item in &items {
        match item {
            // A file name may be dynamic, the script may not.
            Item::Dynamic(text) if first_operand_is_script || !operand_like(text) => {
                return Some(format!("`sed` has an argument only known when it runs (`{text}`)"));
            }
            Item::Dynamic(_) => {}
            Item::Opt(Opt::Unknown(name), _) => {
                return Some(format!("`sed` has an option that is not known (`{name}`)"));
            }
            Item::Opt(opt, _) if opt.is(Some('i'), "in-place") => {
                return Some("`sed` edits files in place (-i)".to_owned());
            }
            Item::Opt(opt, _) if opt.is(Some('f'), "file") => {
                return Some("`sed` runs a script file (-f) that is not checked".to_owned());
            }
            Item::Opt(opt, value) if opt.is(Some('e'), "expression") => {
                first_operand_is_script = false;
                match value {
                    Some(script) => scripts.push(script.clone()),
                    None => return Some("`sed -e` has a script that is not known".to_owned()),
                }
            }
            Item::Opt(..) => {}
            Item::Operand(text) if first_operand_is_script => {
                first_operand_is_script = false;
                scripts.push(text.clone());
            }
            Item::Operand(_) => {}
        }
    }
    // The `-e` scripts are one script, joined by newlines (`-e 'a\' -e text`).
    if reads_only(&scripts.join("\n")) {
        None
    } else {
        Some("`sed` writes files or runs commands from its script (e, w, W, s///e, s///w)".to_owned())
    }
}

/// Whether a sed script only prints, deletes and substitutes in its output: parsed command by
/// command (addresses, `!`, blocks, labels, text arguments, `s` and `y` with any delimiter),
/// failing closed on anything it does not know.
fn reads_only(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    let peek = |at: usize| chars.get(at).copied();
    // Skips a delimited part (`/re/`, a part of `s`), escapes included; false at the end.
    let delimited = |at: &mut usize, delimiter: char| -> bool {
        while let Some(c) = chars.get(*at).copied() {
            *at += 1;
            if c == '\\' {
                *at += 1;
            } else if c == delimiter {
                return true;
            }
        }
        false
    };
    let to_line_end = |at: &mut usize| {
        while chars.get(*at).is_some_and(|c| *c != '\n') {
            *at += 1;
        }
    };
    let label = |at: &mut usize| {
        while chars.get(*at).is_some_and(|c| *c != '\n' && *c != ';') {
            *at += 1;
        }
    };
    let digits = |at: &mut usize| {
        while chars.get(*at).is_some_and(char::is_ascii_digit) {
            *at += 1;
        }
    };
    let spaces = |at: &mut usize| {
        while chars.get(*at).is_some_and(|c| *c == ' ' || *c == '\t') {
            *at += 1;
        }
    };
    loop {
        while peek(at).is_some_and(|c| c.is_whitespace() || c == ';') {
            at += 1;
        }
        let Some(mut c) = peek(at) else { return true };
        if c == '#' {
            to_line_end(&mut at);
            continue;
        }
        // Up to two addresses.
        for second in [false, true] {
            let Some(a) = peek(at) else { return false };
            match a {
                '0'..='9' => {
                    digits(&mut at);
                    if peek(at) == Some('~') {
                        at += 1;
                        digits(&mut at);
                    }
                }
                '$' => at += 1,
                '+' | '~' if second => {
                    at += 1;
                    digits(&mut at);
                }
                '/' => {
                    at += 1;
                    if !delimited(&mut at, '/') {
                        return false;
                    }
                }
                '\\' => {
                    let Some(delimiter) = peek(at + 1) else { return false };
                    at += 2;
                    if !delimited(&mut at, delimiter) {
                        return false;
                    }
                }
                _ if second => return false,
                _ => break,
            }
            while matches!(peek(at), Some('I' | 'M')) {
                at += 1;
            }
            spaces(&mut at);
            if second || peek(at) != Some(',') {
                break;
            }
            at += 1;
            spaces(&mut at);
        }
        while matches!(peek(at), Some('!' | ' ' | '\t')) {
            at += 1;
        }
        match peek(at) {
            Some(next) => c = next,
            None => return false,
        }
        at += 1;
        match c {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {}
            'l' | 'q' | 'Q' | 'L' => {
                spaces(&mut at);
                digits(&mut at);
            }
            ':' | 'b' | 't' | 'T' | 'v' => label(&mut at),
            // Text to the end of the line; `a\` puts it on the next lines, each but the last
            // ending in a backslash.
            'a' | 'i' | 'c' => {
                spaces(&mut at);
                if peek(at) == Some('\\') {
                    at += 1;
                    if peek(at) == Some('\n') {
                        at += 1;
                    }
                }
                while let Some(t) = peek(at) {
                    at += 1;
                    if t == '\\' {
                        at += 1;
                    } else if t == '\n' {
                        break;
                    }
                }
            }
            // Reads a file into the output: a file name to the end of the line.
            'r' | 'R' => to_line_end(&mut at),
            's' | 'y' => {
                let Some(delimiter) = peek(at).filter(|d| *d != '\n' && *d != '\\') else { return false };
                at += 1;
                if !delimited(&mut at, delimiter) || !delimited(&mut at, delimiter) {
                    return false;
                }
                if c == 's' {
                    while let Some(flag) = peek(at) {
                        match flag {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => at += 1,
                            'e' | 'w' | 'W' => return false,
                            _ => break,
                        }
                    }
                }
                spaces(&mut at);
                if !matches!(peek(at), None | Some(';' | '\n' | '}' | '#')) {
                    return false;
                }
            }
            // `e`, `w`, `W` and anything else.
            _ => return false,
        }
    }
}
