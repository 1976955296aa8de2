//! Edit corpus: real changes, sent the way models send them. The changes are the hunks between
//! consecutive versions of crates in the cargo registry (`~/.cargo/registry/src`), code nobody
//! here wrote; with no crate in two versions, a line added to a block of a real file stands in.
//! Each hunk becomes an edit (`old_string`: the old side with up to 3 lines of context;
//! `new_string`: the new side), and each variant alters it the way models do: CRLF file, trailing
//! whitespace, tabs and spaces swapped, indentation off in `old_string` only or in both, a blank
//! line dropped (from `old_string` or from both; apart from the drifted share when it is the line
//! right next to the change, where inserted lines may go before it or after it), `\n` escapes, typographic quotes, `read`'s line numbers; a misremembered
//! identifier (in `old_string` only, in both strings, on a line the edit keeps); the edit already
//! applied; `old_string` twice in the file; `replace_all`. Last, escaped strings over code with
//! backslashes of its own: `\n` escapes where the code has `\\`, `\n` or `\"` in its literals,
//! and both strings escaped as a JSON string is; these may be refused (a `\n` can be the code's
//! or a line break) and are reported apart.
//!
//! The expected file is the old version with exactly that hunk changed to the new version's
//! text. Each case ends correct, refused, or WRONG (written, but neither the original nor the
//! intended file). The test fails on any WRONG, when fewer than 98% of the drifted edits are
//! correct, or when a must-fail edit is not refused. The table is printed to stderr.

mod support;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use tandem_text::LineEnding;
use tandem_text::matcher::{self, MatchError, find};

/// Cases per variant (at most).
const PER_VARIANT: usize = 150;

/// Deterministic pseudo-random numbers (no dependency, same corpus every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % bound.max(1)
    }
}

fn say(text: &str) {
    std::io::stderr().write_all(text.as_bytes()).ok();
}

/// The Rust files below `root`, sorted.
fn rust_files(root: &Path) -> Vec<PathBuf> {
    let files = support::files_under(root).into_iter().filter(|p| p.extension().is_some_and(|e| e == "rs"));
    files.map(|p| root.join(p)).collect()
}

fn read(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    (text.len() < 300_000 && !text.contains('\r') && text.ends_with('\n')).then_some(text)
}

/// One real change: the file before, and one hunk of it.
struct Change {
    label: String,
    pre: String,
    /// Lines of the old side (context included), with their `\n`.
    old: Vec<String>,
    /// Lines of the new side.
    new: Vec<String>,
    /// Context lines before the first changed line (same in `old` and `new`).
    before: usize,
    /// Context lines after the last changed line.
    after: usize,
}

impl Change {
    fn old_string(&self) -> String {
        self.old.concat()
    }

    fn new_string(&self) -> String {
        self.new.concat()
    }

    /// The file with exactly this hunk changed.
    fn expected(&self) -> String {
        let old = self.old_string();
        let at = self.pre.find(&old).unwrap_or(0);
        format!("{}{}{}", &self.pre[..at], self.new_string(), &self.pre[at + old.len()..])
    }
}

/// The hunks (up to 3 lines of context) of every changed `.rs` file of consecutive versions.
fn real_changes(pairs: &[(PathBuf, PathBuf)]) -> Vec<Change> {
    let mut changes = Vec::new();
    for (old_root, new_root) in pairs {
        for path in rust_files(old_root) {
            let Ok(relative) = path.strip_prefix(old_root) else { continue };
            let (Some(pre), Some(post)) = (read(&path), read(&new_root.join(relative))) else { continue };
            if pre == post {
                continue;
            }
            let diff = similar::TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_lines(&pre, &post);
            let (pre_lines, post_lines): (Vec<&str>, Vec<&str>) =
                (pre.split_inclusive('\n').collect(), post.split_inclusive('\n').collect());
            for group in diff.grouped_ops(3) {
                let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
                let old_range = first.old_range().start..last.old_range().end;
                let new_range = first.new_range().start..last.new_range().end;
                let before = if first.tag() == similar::DiffTag::Equal { first.old_range().len() } else { 0 };
                let after = if last.tag() == similar::DiffTag::Equal { last.old_range().len() } else { 0 };
                let old: Vec<String> = pre_lines[old_range].iter().map(|l| (*l).to_owned()).collect();
                let new: Vec<String> = post_lines[new_range].iter().map(|l| (*l).to_owned()).collect();
                let old_string = old.concat();
                // A hunk the model would have to make unique with more context, or one that is
                // nearly all removal of nothing, says nothing about placing.
                if old.len() < 2 || old.len() > 40 || new.len() > 60 || pre.matches(&old_string).count() != 1 {
                    continue;
                }
                if old.iter().filter(|l| l.trim().len() > 3).count() < 2 {
                    continue;
                }
                let label = format!("{}:{}", path.display(), first.old_range().start + 1);
                changes.push(Change { label, pre: pre.clone(), old, new, before, after });
            }
        }
    }
    changes
}

/// Stand-in changes when no crate is in two versions: a line added to a block of a real file.
fn synthetic_changes(src: &Path, rng: &mut Lcg) -> Vec<Change> {
    let mut files = Vec::new();
    for index in std::fs::read_dir(src).into_iter().flatten().flatten() {
        files.extend(rust_files(&index.path()));
    }
    let mut changes = Vec::new();
    for attempt in 0..20_000 {
        if files.is_empty() || changes.len() >= 1500 {
            break;
        }
        let path = &files[rng.next(files.len())];
        let Some(pre) = read(path) else { continue };
        let lines: Vec<&str> = pre.split_inclusive('\n').collect();
        if lines.len() < 12 {
            continue;
        }
        let size = 4 + rng.next(5);
        let first = rng.next(lines.len() - size);
        let old: Vec<String> = lines[first..first + size].iter().map(|l| (*l).to_owned()).collect();
        if pre.matches(&old.concat()).count() != 1 || old.iter().filter(|l| l.trim().len() > 3).count() < 3 {
            continue;
        }
        let indent = &old[1][..old[1].len() - old[1].trim_start().len()];
        let mut new = old.clone();
        new.insert(2, format!("{indent}tandem_marker({attempt});\n"));
        changes.push(Change {
            label: format!("{}:{}", path.display(), first + 1),
            pre,
            old,
            new,
            before: 2,
            after: size - 2,
        });
    }
    changes
}

/// What a case must end as.
enum Expect {
    /// This text.
    Text(String),
    /// Refused (nothing written).
    Refused,
    /// Refused, or exactly this text.
    RefusedOr(String),
}

/// One edit as the model sends it.
struct Case {
    text: String,
    old: String,
    new: String,
    replace_all: bool,
    expect: Expect,
}

impl Case {
    /// An edit of `text` (one occurrence of `old`, not `replace_all`).
    fn edit(text: String, old: String, new: String, expect: Expect) -> Self {
        Self { text, old, new, replace_all: false, expect }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Must be correct.
    Exact,
    /// Counted in the drifted share that must be at least 98% correct.
    Drifted,
    /// Drifted in a way that can leave two readings (a blank line dropped right next to the
    /// changed lines: do inserted lines go before it or after it?): correct or refused, and
    /// reported apart from the drifted share.
    Unclear,
    /// Must be refused, or end exactly as intended.
    MustFail,
    /// Escaped strings over code with escapes of its own (`"\\n"`, `'\\''`): a `\\n` the model
    /// sent may be a line break or the code's, so some can only be refused. Correct or refused,
    /// and reported apart from the drifted share.
    Escaped,
}

type Make = fn(&Change, &mut Lcg) -> Option<Case>;

fn map_lines(lines: &[String], f: impl Fn(&str) -> String) -> String {
    lines.iter().map(|l| f(l)).collect()
}

fn case(change: &Change, old: String, new: String) -> Option<Case> {
    // A drifted old_string that is verbatim elsewhere in the file is another real target.
    (old != change.old_string() && !change.pre.contains(&old) || old == change.old_string())
        .then(|| Case::edit(change.pre.clone(), old, new, Expect::Text(change.expected())))
}

fn exact(change: &Change, _: &mut Lcg) -> Option<Case> {
    case(change, change.old_string(), change.new_string())
}

fn crlf(change: &Change, _: &mut Lcg) -> Option<Case> {
    Some(Case::edit(
        change.pre.replace('\n', "\r\n"),
        change.old_string(),
        change.new_string(),
        Expect::Text(change.expected().replace('\n', "\r\n")),
    ))
}

fn has_trailing_whitespace(lines: &[String]) -> bool {
    lines.iter().any(|l| l.trim_end_matches('\n').trim_end().len() != l.trim_end_matches('\n').len())
}

fn trailing(change: &Change, _: &mut Lcg) -> Option<Case> {
    if has_trailing_whitespace(&change.old) || has_trailing_whitespace(&change.new) {
        return None;
    }
    let add = |l: &str| format!("{}  \n", l.trim_end_matches('\n'));
    case(change, map_lines(&change.old, add), map_lines(&change.new, add))
}

fn swap_indentation(line: &str) -> String {
    let ws = &line[..line.len() - line.trim_start().len()];
    let swapped = if ws.contains('\t') { ws.replace('\t', "    ") } else { ws.replace("    ", "\t") };
    format!("{swapped}{}", line.trim_start())
}

fn tabs_both(change: &Change, _: &mut Lcg) -> Option<Case> {
    // Only an old_string that shows the swap: without indentation, nothing tells the frame.
    if map_lines(&change.old, swap_indentation) == change.old_string() {
        return None;
    }
    case(change, map_lines(&change.old, swap_indentation), map_lines(&change.new, swap_indentation))
}

fn tabs_old(change: &Change, _: &mut Lcg) -> Option<Case> {
    if map_lines(&change.old, swap_indentation) == change.old_string() {
        return None;
    }
    case(change, map_lines(&change.old, swap_indentation), change.new_string())
}

/// Every non-blank line 2 columns to the right, or (when all have them) 2 to the left.
fn shift(lines: &[String], right: bool) -> Option<String> {
    let solid = |l: &&String| !l.trim().is_empty();
    if !right && !lines.iter().filter(solid).all(|l| l.starts_with("  ")) {
        return None;
    }
    Some(map_lines(lines, |l| match (l.trim().is_empty(), right) {
        (true, _) => l.to_owned(),
        (false, true) => format!("  {l}"),
        (false, false) => l[2..].to_owned(),
    }))
}

fn indent_old(change: &Change, rng: &mut Lcg) -> Option<Case> {
    case(change, shift(&change.old, rng.next(2) == 0)?, change.new_string())
}

fn indent_both(change: &Change, rng: &mut Lcg) -> Option<Case> {
    let right = rng.next(2) == 0;
    case(change, shift(&change.old, right)?, shift(&change.new, right)?)
}

/// An interior blank line of the context, dropped from `old_string` (and from `new_string`).
/// `touching`: the blank line is the one right next to the changed lines. Then the edit has
/// two readings (do the lines it inserts there go before the file's blank line or after it?),
/// so refusing is as right as applying.
fn drop_blank(change: &Change, both: bool, touching: bool) -> Option<Case> {
    let blank = |l: &String| l.trim().is_empty();
    let next_to_change = |i: usize| i + 1 == change.before || i == change.old.len() - change.after;
    let fits = |i: usize| blank(&change.old[i]) && next_to_change(i) == touching;
    let before = (1..change.before).find(|&i| fits(i));
    let after = (1..change.after).map(|k| change.old.len() - 1 - k).find(|&i| fits(i));
    let (at_old, at_new) = match (before, after) {
        (Some(i), _) => (i, i),
        (None, Some(i)) => (i, change.new.len() - (change.old.len() - i)),
        (None, None) => return None,
    };
    let mut old = change.old.clone();
    old.remove(at_old);
    let mut new = change.new.clone();
    if both {
        new.remove(at_new);
    }
    case(change, old.concat(), new.concat())
}

fn blank_old(change: &Change, _: &mut Lcg) -> Option<Case> {
    drop_blank(change, false, false)
}

fn blank_both(change: &Change, _: &mut Lcg) -> Option<Case> {
    drop_blank(change, true, false)
}

fn blank_old_touching(change: &Change, _: &mut Lcg) -> Option<Case> {
    drop_blank(change, false, true)
}

fn blank_both_touching(change: &Change, _: &mut Lcg) -> Option<Case> {
    drop_blank(change, true, true)
}

fn escapes(change: &Change, _: &mut Lcg) -> Option<Case> {
    let (old, new) = (change.old_string(), change.new_string());
    if old.contains('\\') || new.contains('\\') {
        return None;
    }
    case(change, old.replace('\n', "\\n"), new.replace('\n', "\\n"))
}

/// `\n` escapes where the code has backslashes of its own, which must stay as they are.
fn escapes_over_backslashes(change: &Change, _: &mut Lcg) -> Option<Case> {
    let (old, new) = (change.old_string(), change.new_string());
    if !old.contains('\\') && !new.contains('\\') {
        return None;
    }
    case(change, old.replace('\n', "\\n"), new.replace('\n', "\\n"))
}

/// Both strings escaped as the body of a JSON string (`\\`, `\"`, `\n`, `\t`): escaped twice.
fn json_escaped(change: &Change, _: &mut Lcg) -> Option<Case> {
    let escape = |text: &str| {
        let mut out = String::with_capacity(text.len() * 2);
        for c in text.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c => out.push(c),
            }
        }
        out
    };
    let (old, new) = (change.old_string(), change.new_string());
    if !old.contains(['\\', '"', '\t']) && !new.contains(['\\', '"', '\t']) {
        return None;
    }
    case(change, escape(&old), escape(&new))
}

fn curly(text: &str) -> String {
    let mut open = false;
    text.chars()
        .map(|c| match c {
            '"' => {
                open = !open;
                if open { '\u{201C}' } else { '\u{201D}' }
            }
            c => c,
        })
        .collect()
}

fn quotes(change: &Change, _: &mut Lcg) -> Option<Case> {
    let (old, new) = (change.old_string(), change.new_string());
    if !old.contains('"') || !old.is_ascii() || !new.is_ascii() {
        return None;
    }
    case(change, curly(&old), curly(&new))
}

fn line_numbers(change: &Change, _: &mut Lcg) -> Option<Case> {
    let old = change.old_string();
    let at = change.pre.find(&old)?;
    let first = change.pre[..at].matches('\n').count() + 1;
    let numbered: String = change.old.iter().enumerate().map(|(i, l)| format!("{:>6}\t{l}", first + i)).collect();
    case(change, numbered, change.new_string())
}

/// An identifier of at least 4 letters on `line`, misremembered: `version` → `versions`.
fn misremember(line: &str, rng: &mut Lcg) -> Option<(String, String)> {
    let words: Vec<&str> = line
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.len() >= 4 && w.chars().next().is_some_and(char::is_alphabetic))
        .collect();
    let word = words.get(rng.next(words.len()))?;
    Some(((*word).to_owned(), format!("{word}s")))
}

/// Replaces the whole word `from` by `to` in `line`.
fn rename(line: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(from) {
        let before_ok = !rest[..at].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
        let after = &rest[at + from.len()..];
        let after_ok = !after.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        out.push_str(if before_ok && after_ok { to } else { from });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A removed line of the hunk with an identifier misremembered in `old_string`, and (when
/// `both`) wherever `new_string`'s changed lines use it.
fn identifier_on_changed_line(change: &Change, rng: &mut Lcg, both: bool) -> Option<Case> {
    // A line the change removes (a hunk's middle also has lines it keeps).
    let removed: Vec<usize> =
        (change.before..change.old.len() - change.after).filter(|&i| !change.new.contains(&change.old[i])).collect();
    let i = *removed.get(rng.next(removed.len()))?;
    let (from, to) = misremember(&change.old[i], rng)?;
    let mut old = change.old.clone();
    old[i] = rename(&old[i], &from, &to);
    let mut new = change.new.clone();
    if both {
        // The model's new version of that line keeps its misremembered identifier: the added
        // line most like it (if any is much like it) that uses the identifier.
        let added = change.before..change.new.len() - change.after;
        let likeness =
            |k: &usize| similar::TextDiff::from_chars(change.old[i].as_str(), change.new[*k].as_str()).ratio();
        // (A line old_string also has elsewhere is not that line's new version.)
        let best = added
            .filter(|k| rename(&change.new[*k], &from, &to) != change.new[*k] && !change.old.contains(&change.new[*k]))
            .max_by(|x, y| likeness(x).total_cmp(&likeness(y)))
            .filter(|k| likeness(k) >= 0.5)?;
        new[best] = rename(&new[best], &from, &to);
    }
    must_fail(change, old.concat(), new.concat())
}

/// A context line with an identifier misremembered in both strings.
fn identifier_on_kept_line(change: &Change, rng: &mut Lcg) -> Option<Case> {
    let context: Vec<usize> = (0..change.before).chain(change.old.len() - change.after..change.old.len()).collect();
    let i = *context.get(rng.next(context.len()))?;
    let (from, to) = misremember(&change.old[i], rng)?;
    let j = if i < change.before { i } else { change.new.len() - (change.old.len() - i) };
    let mut old = change.old.clone();
    old[i] = rename(&old[i], &from, &to);
    let mut new = change.new.clone();
    new[j] = rename(&new[j], &from, &to);
    must_fail(change, old.concat(), new.concat())
}

fn must_fail(change: &Change, old: String, new: String) -> Option<Case> {
    (!change.pre.contains(&old)).then(|| Case::edit(change.pre.clone(), old, new, Expect::RefusedOr(change.expected())))
}

fn identifier_old(change: &Change, rng: &mut Lcg) -> Option<Case> {
    identifier_on_changed_line(change, rng, false)
}

fn identifier_both(change: &Change, rng: &mut Lcg) -> Option<Case> {
    identifier_on_changed_line(change, rng, true)
}

fn already_applied(change: &Change, _: &mut Lcg) -> Option<Case> {
    Some(Case::edit(change.expected(), change.old_string(), change.new_string(), Expect::Refused))
}

fn already_applied_drifted(change: &Change, rng: &mut Lcg) -> Option<Case> {
    let right = rng.next(2) == 0;
    Some(Case::edit(change.expected(), shift(&change.old, right)?, shift(&change.new, right)?, Expect::Refused))
}

fn ambiguous(change: &Change, _: &mut Lcg) -> Option<Case> {
    let old = change.old_string();
    Some(Case::edit(format!("{}\n{old}", change.pre), old, change.new_string(), Expect::Refused))
}

fn replace_all(change: &Change, rng: &mut Lcg) -> Option<Case> {
    let line = &change.old[rng.next(change.old.len())];
    let (word, _) = misremember(line, rng)?;
    if change.pre.matches(word.as_str()).count() < 2 {
        return None;
    }
    let new = format!("{word}_renamed");
    Some(Case {
        text: change.pre.clone(),
        expect: Expect::Text(change.pre.replace(&word, &new)),
        old: word,
        new,
        replace_all: true,
    })
}

#[derive(Default)]
struct Tally {
    correct: usize,
    refused: usize,
    wrong: usize,
}

/// Runs one case: `Ok(Some(text))` written, `Ok(None)` refused.
fn run(case: &Case) -> Option<String> {
    let ending = LineEnding::detect(&case.text);
    if case.replace_all {
        return matcher::replace_all(&case.text, &case.old, &case.new, ending).ok().map(|r| r.text);
    }
    match find(&case.text, &case.old, &case.new, ending) {
        Ok(m) => Some(format!("{}{}{}", &case.text[..m.start], m.replacement, &case.text[m.end..])),
        Err(
            MatchError::NotFound { .. }
            | MatchError::Ambiguous { .. }
            | MatchError::Conflict { .. }
            | MatchError::Indentation { .. }
            | MatchError::AlreadyApplied { .. },
        ) => None,
    }
}

/// A WRONG case in detail (`TANDEM_EDIT_CORPUS_SHOW=<variant>`).
fn show(case: &Case, got: &str) {
    let want = match &case.expect {
        Expect::Text(want) | Expect::RefusedOr(want) => want.as_str(),
        Expect::Refused => case.text.as_str(),
    };
    let diff =
        similar::TextDiff::from_lines(want, got).unified_diff().context_radius(2).header("want", "got").to_string();
    say(&format!("--- old_string:\n{}\n--- new_string:\n{}\n{diff}\n", case.old, case.new));
}

#[test]
fn real_edits_land_exactly_or_are_refused() {
    let Some(src) = support::registry_src().filter(|s| s.is_dir()) else {
        say("\nedit corpus: SKIPPED: no crate sources under ~/.cargo/registry/src to build it from\n");
        return;
    };
    let mut rng = Lcg(0x07a4_de11);
    let pairs = support::version_pairs(&src, true);
    let mut changes = real_changes(&pairs);
    let source = if changes.is_empty() {
        changes = synthetic_changes(&src, &mut rng);
        "a line added to blocks of real files (no crate in two versions)".to_owned()
    } else {
        format!("hunks between consecutive versions of {} crate(s)", pairs.len())
    };
    if changes.is_empty() {
        say("\nedit corpus: SKIPPED: no usable source files\n");
        return;
    }
    let variants: [(&str, Kind, Make); 23] = [
        ("exact", Kind::Exact, exact),
        ("CRLF file", Kind::Drifted, crlf),
        ("trailing whitespace", Kind::Drifted, trailing),
        ("tabs<->spaces, both", Kind::Drifted, tabs_both),
        ("tabs<->spaces, old", Kind::Drifted, tabs_old),
        ("indent off, old only", Kind::Drifted, indent_old),
        ("indent off, both", Kind::Drifted, indent_both),
        ("blank dropped, old", Kind::Drifted, blank_old),
        ("blank dropped, both", Kind::Drifted, blank_both),
        ("blank by change, old", Kind::Unclear, blank_old_touching),
        ("blank by change, both", Kind::Unclear, blank_both_touching),
        ("\\n escapes", Kind::Drifted, escapes),
        ("curly quotes", Kind::Drifted, quotes),
        ("line numbers", Kind::Drifted, line_numbers),
        ("ident, old only", Kind::MustFail, identifier_old),
        ("ident, both", Kind::MustFail, identifier_both),
        ("ident, kept line", Kind::MustFail, identifier_on_kept_line),
        ("already applied", Kind::MustFail, already_applied),
        ("already, drifted", Kind::MustFail, already_applied_drifted),
        ("ambiguous", Kind::MustFail, ambiguous),
        ("replace_all", Kind::Exact, replace_all),
        // Last, so that the variants above draw the same cases as without them.
        ("\\n escapes, code has \\", Kind::Escaped, escapes_over_backslashes),
        ("JSON-escaped", Kind::Escaped, json_escaped),
    ];
    let mut report = format!("\nedit corpus: {} changes from {source}\n", changes.len());
    report.push_str(&format!("  {:<22} {:>6} {:>8} {:>8} {:>6}\n", "variant", "cases", "correct", "refused", "WRONG"));
    let mut wrong = Vec::new();
    let mut failures = Vec::new();
    let (mut drifted, mut drifted_correct) = (0, 0);
    let (mut unclear, mut unclear_correct) = (0, 0);
    let (mut escaped, mut escaped_correct) = (0, 0);
    for (name, kind, make) in &variants {
        let mut tally = Tally::default();
        let mut tries = 0;
        while tally.correct + tally.refused + tally.wrong < PER_VARIANT && tries < PER_VARIANT * 20 {
            tries += 1;
            let change = &changes[rng.next(changes.len())];
            let Some(case) = make(change, &mut rng) else { continue };
            let result = run(&case);
            let ok = match (&case.expect, &result) {
                (_, None) => {
                    tally.refused += 1;
                    match kind {
                        Kind::MustFail | Kind::Unclear | Kind::Escaped => true,
                        _ => {
                            if std::env::var("TANDEM_EDIT_CORPUS_SHOW").is_ok_and(|v| v == *name) && tally.refused <= 3
                            {
                                let ending = LineEnding::detect(&case.text);
                                let why = find(&case.text, &case.old, &case.new, ending).err();
                                say(&format!("REFUSED {why:?}\n"));
                                show(&case, &case.text);
                            }
                            if failures.len() < 12 {
                                failures.push(format!("{name}: refused {}", change.label));
                            }
                            false
                        }
                    }
                }
                (Expect::Text(want) | Expect::RefusedOr(want), Some(got)) if got == want => {
                    tally.correct += 1;
                    true
                }
                (_, Some(got)) if *got == case.text => {
                    // Written, but unchanged: nothing happened, which is a refusal in effect.
                    tally.refused += 1;
                    true
                }
                (_, Some(got)) => {
                    tally.wrong += 1;
                    wrong.push(format!("{name}: {}", change.label));
                    if std::env::var("TANDEM_EDIT_CORPUS_SHOW").is_ok_and(|v| v == *name) && tally.wrong <= 2 {
                        show(&case, got);
                    }
                    false
                }
            };
            let correct = usize::from(ok && result.is_some());
            match kind {
                Kind::Drifted => (drifted, drifted_correct) = (drifted + 1, drifted_correct + correct),
                Kind::Unclear => (unclear, unclear_correct) = (unclear + 1, unclear_correct + correct),
                Kind::Escaped => (escaped, escaped_correct) = (escaped + 1, escaped_correct + correct),
                _ => {}
            }
            if *kind == Kind::Exact && !ok && failures.len() < 12 {
                failures.push(format!("{name}: not applied {}", change.label));
            }
        }
        report.push_str(&format!(
            "  {name:<22} {:>6} {:>8} {:>8} {:>6}\n",
            tally.correct + tally.refused + tally.wrong,
            tally.correct,
            tally.refused,
            tally.wrong
        ));
        if *kind == Kind::Exact && tally.refused > 0 {
            wrong.push(format!("{name}: {} exact edit(s) refused", tally.refused));
        }
    }
    let share = drifted_correct as f64 * 100.0 / drifted.max(1) as f64;
    report.push_str(&format!("  drifted edits correct: {drifted_correct} of {drifted} ({share:.1}%)\n"));
    let all = (drifted_correct + unclear_correct) as f64 * 100.0 / (drifted + unclear).max(1) as f64;
    report.push_str(&format!(
        "  with the blank line dropped next to the change too: {} of {} ({all:.1}%; the rest refused)\n",
        drifted_correct + unclear_correct,
        drifted + unclear
    ));
    report.push_str(&format!(
        "  escaped over the code's own escapes: {escaped_correct} of {escaped} ({:.1}%; the rest refused)\n",
        escaped_correct as f64 * 100.0 / escaped.max(1) as f64
    ));
    for failure in &failures {
        report.push_str(&format!("  e.g. {failure}\n"));
    }
    say(&report);
    assert!(
        wrong.is_empty(),
        "edits written wrong (neither the original nor the intended file):\n{}",
        wrong.join("\n")
    );
    assert!(drifted >= 200, "too few drifted cases ({drifted})");
    assert!(share >= 98.0, "only {share:.1}% of drifted edits correct; see the table above");
}
