//! Options read the way the programs read them: getopt_long's rules (clustered short flags, a
//! short option's argument glued to it or in the next word, `--name=value` or `--name value`,
//! long names abbreviated to any unique prefix, `--` ending the options, options and operands
//! in any order), from a per-program table of the real option set. A prefix that matches more
//! than one long option is kept with every candidate, so a check can treat it as the most
//! dangerous of them.

use super::parse::Word;

/// Whether an option takes an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arg {
    /// A flag.
    No,
    /// Glued (`-ofile`, `--output=file`) or the next word (`-o file`, `--output file`).
    Required,
    /// Glued only (`-i.bak`, `--in-place=.bak`).
    Optional,
}

/// How one program reads its options.
pub(super) struct Spec {
    /// Short options and whether each takes an argument.
    pub short: &'static [(char, Arg)],
    /// Long options (without `--`) and whether each takes an argument.
    pub long: &'static [(&'static str, Arg)],
    /// Options end at the first operand (POSIX, and wrappers whose operand is a command).
    pub stop_at_operand: bool,
}

/// One option as the program sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Opt {
    /// A short option.
    Short(char),
    /// A long option, its name resolved against the table: one name, or every candidate of
    /// an ambiguous prefix.
    Long(Vec<&'static str>),
    /// An option the table does not know (the program would refuse it, or the table is
    /// incomplete: a check treats it as unknown).
    Unknown(String),
}

impl Opt {
    /// Whether this option is `short` or (any candidate of) `long`.
    pub fn is(&self, short: Option<char>, long: &str) -> bool {
        match self {
            Opt::Short(c) => Some(*c) == short,
            Opt::Long(names) => names.contains(&long),
            Opt::Unknown(_) => false,
        }
    }
}

/// A word of the command line, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Item {
    /// An option and its argument, when it has one (`None` for a flag, or a dynamic value).
    Opt(Opt, Option<String>),
    /// An operand.
    Operand(String),
    /// A word only known when the command runs: it may be an option or an operand.
    Dynamic(String),
}

/// Reads `args` as the program would; also returns the index of the first word after the
/// options when `spec.stop_at_operand` (the wrapped command), else `args.len()`.
pub(super) fn read(spec: &Spec, args: &[Word]) -> (Vec<Item>, usize) {
    let mut items = Vec::new();
    let mut i = 0;
    let mut options_end = false;
    while let Some(word) = args.get(i) {
        i += 1;
        let Some(text) = word.lit() else {
            // It may be the wrapped command itself.
            if spec.stop_at_operand {
                return (items, i - 1);
            }
            items.push(Item::Dynamic(word.text().to_owned()));
            continue;
        };
        if options_end || text == "-" || !text.starts_with('-') {
            if spec.stop_at_operand {
                return (items, i - 1);
            }
            items.push(Item::Operand(text.to_owned()));
            continue;
        }
        if text == "--" {
            options_end = true;
            if spec.stop_at_operand {
                return (items, i);
            }
            continue;
        }
        let next = |i: &mut usize| {
            let value = args.get(*i).map(|w| w.lit().map(str::to_owned));
            *i += usize::from(value.is_some());
            value.flatten()
        };
        if let Some(long) = text.strip_prefix("--") {
            let (name, glued) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (long, None),
            };
            let candidates: Vec<&'static (&'static str, Arg)> = match spec.long.iter().find(|(n, _)| *n == name) {
                Some(exact) => vec![exact],
                None => spec.long.iter().filter(|(n, _)| n.starts_with(name)).collect(),
            };
            if candidates.is_empty() {
                items.push(Item::Opt(Opt::Unknown(text.to_owned()), glued));
                continue;
            }
            // An ambiguous prefix takes the next word when any candidate would.
            let takes_next = candidates.iter().any(|(_, arg)| *arg == Arg::Required) && glued.is_none();
            let value = if takes_next { next(&mut i) } else { glued };
            items.push(Item::Opt(Opt::Long(candidates.iter().map(|(n, _)| *n).collect()), value));
            continue;
        }
        // A cluster of short options: `-abc`, `-ovalue`, `-nS cmd`.
        let cluster = &text[1..];
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            match spec.short.iter().find(|(s, _)| *s == c).map(|(_, arg)| *arg) {
                None => items.push(Item::Opt(Opt::Unknown(format!("-{c}")), None)),
                Some(Arg::No) => {
                    items.push(Item::Opt(Opt::Short(c), None));
                    continue;
                }
                Some(Arg::Optional) => items.push(Item::Opt(Opt::Short(c), Some(rest.to_owned()))),
                Some(Arg::Required) if rest.is_empty() => {
                    let value = next(&mut i);
                    items.push(Item::Opt(Opt::Short(c), value));
                }
                Some(Arg::Required) => items.push(Item::Opt(Opt::Short(c), Some(rest.to_owned()))),
            }
            // Whatever followed was this option's argument (or the program stopped at an
            // unknown letter).
            break;
        }
    }
    (items, args.len())
}

/// The operands among `items` (a dynamic word that can only be an operand counts).
pub(super) fn operands(items: &[Item]) -> impl Iterator<Item = &str> {
    items.iter().filter_map(|item| match item {
        Item::Operand(text) => Some(text.as_str()),
        Item::Dynamic(text) if operand_like(text) => Some(text.as_str()),
        _ => None,
    })
}

/// Whether a word only known when it runs (its raw text) can only be an operand: what it
/// expands to starts with a known character that is not `-` (`src/$name`, `"$HOME/x"`), or it
/// is a process substitution (`<(…)`, a `/dev/fd` path).
pub(super) fn operand_like(raw: &str) -> bool {
    let text = raw.trim_start_matches('"');
    let path_variable = ["$HOME", "${HOME}", "$PWD", "${PWD}", "$TMPDIR", "${TMPDIR}"]
        .iter()
        .any(|v| text.strip_prefix(v).is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '"'])));
    text.starts_with("<(")
        || text.starts_with(">(")
        || path_variable
        || text.starts_with(|c: char| c.is_ascii_alphanumeric() || "/._~".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        short: &[('n', Arg::No), ('e', Arg::Required), ('i', Arg::Optional), ('S', Arg::Required)],
        long: &[
            ("expression", Arg::Required),
            ("in-place", Arg::Optional),
            ("split-string", Arg::Required),
            ("silent", Arg::No),
        ],
        stop_at_operand: false,
    };

    fn show(args: &[&str]) -> String {
        let words: Vec<Word> = args.iter().map(|a| Word::Lit((*a).to_owned())).collect();
        let (items, _) = read(&SPEC, &words);
        items.iter().map(|item| format!("{item:?}")).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn options_read_like_getopt_long() {
        expect_test::expect![[r#"
            Opt(Short('n'), None) Opt(Short('e'), Some("w out")) Operand("in")
            Opt(Long(["expression"]), Some("1e x")) Opt(Long(["in-place"]), Some(".bak"))
            Opt(Long(["expression"]), Some("p")) Opt(Long(["in-place"]), None) Operand("x")
            Opt(Long(["split-string", "silent"]), Some("cmd"))
            Opt(Short('i'), Some("n")) Opt(Short('S'), Some("./x")) Operand("-e") Operand("--in")
            Opt(Unknown("--other"), None) Opt(Unknown("-q"), None)"#]]
        .assert_eq(
            &[
                show(&["-ne", "w out", "in"]),
                show(&["--expr=1e x", "--in-place=.bak"]),
                show(&["--ex", "p", "--in", "x"]),
                show(&["--s", "cmd"]),
                show(&["-in", "-S./x", "--", "-e", "--in"]),
                show(&["--other", "-q"]),
            ]
            .join("\n"),
        );
    }
}
