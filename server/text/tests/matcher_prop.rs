//! Property: an edit placed by the matcher lands exactly as intended or is refused, whatever
//! the drift between `old_string` and the file: indentation off in `old_string` only or in both
//! strings, trailing whitespace, tabs for spaces, a dropped blank line, a misremembered word on a
//! line the edit changes or on one it keeps. Texts are made of few distinct words, so that lines
//! repeat and blocks resemble each other (the hard case for a fuzzy matcher).
//!
//! And, on code-like texts of few line shapes (`}`, `#[test]`, ... repeat, so an edit's diff can
//! be read several ways): a blank line dropped from old_string only or from both strings lands
//! where it was or the edit is refused; an edit the file already holds is refused.
//!
//! And, on code whose string literals hold escapes of their own (`\\`, `\n`, `\"`, `\t`), with
//! an edit escaped the ways models mangle them (line breaks as `\n`, tabs as `\t`, quotes as
//! `\"`, or all of it as a JSON string): the edit changes only the lines it replaces, everything
//! else byte for byte as it was, or is refused; and where the escaping can be undone (a JSON
//! string, or line breaks in code without a `\n` of its own), it lands exactly as intended.

use std::ops::Range;

use proptest::prelude::*;
use tandem_text::LineEnding;
use tandem_text::matcher::find;

const WORDS: &[&str] = &["let", "x", "=", "value", "call();", "{", "}", "return", "item", "+", "1;", "if", "ok"];

fn render_line((depth, words): &(usize, Vec<usize>)) -> String {
    if words.is_empty() {
        return String::new();
    }
    let text: Vec<&str> = words.iter().map(|&w| WORDS[w % WORDS.len()]).collect();
    format!("{}{}", "    ".repeat(*depth), text.join(" "))
}

fn lines() -> impl Strategy<Value = Vec<(usize, Vec<usize>)>> {
    prop::collection::vec((0usize..3, prop::collection::vec(0usize..WORDS.len(), 0..5)), 8..40)
}

#[derive(Clone, Copy, Debug)]
enum Drift {
    None,
    IndentOld,
    IndentBoth,
    TrailingBoth,
    TabsBoth,
    BlankOld,
    WordOnChangedLine,
    WordOnKeptLineBoth,
}

fn drift() -> impl Strategy<Value = Drift> {
    use Drift::*;
    prop::sample::select(
        &[None, IndentOld, IndentBoth, TrailingBoth, TabsBoth, BlankOld, WordOnChangedLine, WordOnKeptLineBoth][..],
    )
}

fn join(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn map(lines: &[String], f: impl Fn(&str) -> String) -> Vec<String> {
    lines.iter().map(|l| f(l)).collect()
}

fn shifted(line: &str) -> String {
    if line.is_empty() { String::new() } else { format!("  {line}") }
}

fn tabbed(line: &str) -> String {
    let body = line.trim_start();
    format!("{}{body}", line[..line.len() - body.len()].replace("    ", "\t"))
}

/// `line` with its first word of at least two letters misremembered (`value` → `values`).
fn misremembered(line: &str) -> Option<String> {
    let word = line.split_whitespace().find(|w| w.len() >= 2 && w.chars().all(char::is_alphabetic))?;
    let at = line.find(word)?;
    Some(format!("{}{word}s{}", &line[..at], &line[at + word.len()..]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, max_global_rejects: 1_000_000, ..ProptestConfig::default() })]

    #[test]
    fn edits_land_as_intended_or_are_refused(
        source in lines(),
        start in 0usize..40,
        size in 3usize..7,
        at in 0usize..7,
        kind in 0usize..3,
        how in drift(),
    ) {
        let text_lines: Vec<String> = source.iter().map(render_line).collect();
        let (_, block, text, old_exact) = block_of(&text_lines, start, size)?;
        prop_assume!(block.iter().filter(|l| !l.trim().is_empty()).count() >= 2);
        prop_assume!(text.matches(&old_exact).count() == 1);
        let at = at % size;
        let mut edited = block.clone();
        let marker = format!("{}changed_marker();", &block[at][..block[at].len() - block[at].trim_start().len()]);
        // 0: a line inserted at `at`, 1: line `at` replaced, 2: line `at` removed.
        let kind = if kind == 2 && size <= 3 { 0 } else { kind };
        match kind {
            0 => edited.insert(at, marker),
            1 => edited[at] = marker,
            _ => {
                edited.remove(at);
            }
        }
        let new_exact = join(&edited);
        let begin = text.find(&old_exact).unwrap_or(0);
        let expected = format!("{}{new_exact}{}", &text[..begin], &text[begin + old_exact.len()..]);
        let (old, new) = match how {
            Drift::None => (old_exact.clone(), new_exact.clone()),
            Drift::IndentOld => (join(&map(&block, shifted)), new_exact.clone()),
            Drift::IndentBoth => (join(&map(&block, shifted)), join(&map(&edited, shifted))),
            Drift::TrailingBoth => {
                let add = |l: &str| format!("{l}  ");
                (join(&map(&block, add)), join(&map(&edited, add)))
            }
            Drift::TabsBoth => (join(&map(&block, tabbed)), join(&map(&edited, tabbed))),
            Drift::BlankOld => {
                let blank = (1..size - 1).find(|&i| block[i].is_empty());
                let Some(blank) = blank else { return Ok(()) };
                let mut dropped = block.clone();
                dropped.remove(blank);
                (join(&dropped), new_exact.clone())
            }
            Drift::WordOnChangedLine => {
                // The line the edit replaces or removes (or, for an insertion, the one before).
                let Some(wrong) = misremembered(&block[at]) else { return Ok(()) };
                let mut old = block.clone();
                old[at] = wrong;
                (join(&old), new_exact.clone())
            }
            Drift::WordOnKeptLineBoth => {
                let kept = (0..size).find(|&i| i != at && misremembered(&block[i]).is_some());
                let Some(i) = kept else { return Ok(()) };
                let wrong = misremembered(&block[i]).unwrap_or_default();
                let mut old = block.clone();
                old[i] = wrong.clone();
                let mut new = edited.clone();
                let j = match kind {
                    0 if i >= at => i + 1,
                    2 if i > at => i - 1,
                    _ => i,
                };
                new[j] = wrong;
                (join(&old), join(&new))
            }
        };
        prop_assume!(old != new);
        // A drifted old_string that is verbatim in the text is another real target: an exact
        // match there is what was asked.
        prop_assume!(matches!(how, Drift::None) || !text.contains(&old));
        match find(&text, &old, &new, LineEnding::Lf) {
            Ok(m) => {
                let got = format!("{}{}{}", &text[..m.start], m.replacement, &text[m.end..]);
                prop_assert_eq!(got, expected, "{:?} {} placed wrong; text {:?} old_string {:?} new_string {:?}", how, m.strategy, text, old, new);
            }
            Err(err) => {
                // Only drift may be refused; an exact old_string that is unique must apply.
                prop_assert!(!matches!(how, Drift::None), "exact edit refused: {err:?}");
            }
        }
    }
}

/// Lines of code as rustfmt leaves it, from few shapes so that lines repeat (`}`, `#[test]`):
/// an edit's diff can then be read several ways. Blank lines never two in a row.
const SHAPES: &[&str] = &["", "}", "{", "#[test]", "fn a() {", "call();", "let x = 1;", "return x;"];

fn shaped(lines: &[(usize, usize)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for &(depth, shape) in lines {
        let line = match SHAPES.get(shape) {
            Some(&"") => String::new(),
            Some(shape) => format!("{}{shape}", "    ".repeat(depth)),
            None => format!("{}changed_marker();", "    ".repeat(depth)),
        };
        if !(line.is_empty() && out.last().is_some_and(String::is_empty)) {
            out.push(line);
        }
    }
    out
}

fn shapes(len: Range<usize>, marker: bool) -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((0usize..2, 0usize..SHAPES.len() + usize::from(marker)), len)
}

fn no_double_blank(lines: &[String]) -> bool {
    lines.windows(2).all(|pair| !(pair[0].is_empty() && pair[1].is_empty()))
}

/// Where `pattern` occurs in `text`, overlapping occurrences included.
fn occurrences(text: &str, pattern: &str) -> Vec<usize> {
    (0..text.len()).filter(|&i| text.is_char_boundary(i) && text[i..].starts_with(pattern)).collect()
}

/// An edit of `block`: `del` lines from `at` replaced by `ins`.
fn edited(block: &[String], at: usize, del: usize, ins: &[String]) -> Vec<String> {
    let mut out = block[..at].to_vec();
    out.extend_from_slice(ins);
    out.extend_from_slice(&block[at + del..]);
    out
}

/// Lines `start..start + size` of `lines` (`start` taken modulo what fits) as `(start, block,
/// text of all lines, text of the block)`; rejected unless there are more lines than `size`.
fn block_of(
    lines: &[String],
    start: usize,
    size: usize,
) -> Result<(usize, Vec<String>, String, String), TestCaseError> {
    prop_assume!(size < lines.len());
    let start = start % (lines.len() - size);
    let block = lines[start..start + size].to_vec();
    let old_exact = join(&block);
    Ok((start, block, join(lines), old_exact))
}

/// An edit of a block of code-like lines: the text of `source`, and the block of `size` of its
/// lines from `start` (both taken modulo what fits), which occurs in it once, with `del` of its
/// lines from `at` replaced by `insert`'s.
struct BlockEdit {
    lines: Vec<String>,
    text: String,
    start: usize,
    block: Vec<String>,
    /// The block's text and where it starts in `text`.
    old_exact: String,
    begin: usize,
    at: usize,
    del: usize,
    ins: Vec<String>,
    new_block: Vec<String>,
}

/// What a [`BlockEdit`] is drawn from: the text's line shapes, `start`, `size`, `at`, `del` and
/// the inserted line shapes.
type Draw = (Vec<(usize, usize)>, usize, usize, usize, usize, Vec<(usize, usize)>);

/// Texts of 8 to 30 lines, blocks of `size` lines, edits that delete `del` lines and insert
/// `insert` (a marked line among them).
fn draws(size: Range<usize>, del: Range<usize>, insert: Range<usize>) -> impl Strategy<Value = Draw> {
    (shapes(8..30, false), 0usize..30, size.clone(), 0..size.end, del, shapes(insert, true))
}

fn block_edit((source, start, size, at, del, insert): Draw) -> Result<BlockEdit, TestCaseError> {
    let lines = shaped(&source);
    let (start, block, text, old_exact) = block_of(&lines, start, size)?;
    let begin = join(&lines[..start]).len();
    prop_assume!(occurrences(&text, &old_exact) == [begin]);
    let at = at % (size + 1);
    let del = del.min(size - at);
    let ins = shaped(&insert);
    let new_block = edited(&block, at, del, &ins);
    Ok(BlockEdit { lines, text, start, block, old_exact, begin, at, del, ins, new_block })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, max_global_rejects: 1_000_000, ..ProptestConfig::default() })]

    /// A blank line of the file that the edit keeps is missing from old_string (or from both
    /// strings), beside lines new_string repeats: the edit lands as intended (the blank line
    /// where it was among the lines the edit keeps) or is refused, whichever way the edit's
    /// diff can be read.
    #[test]
    fn a_dropped_blank_line_lands_where_it_was_or_the_edit_is_refused(
        draw in draws(3..9, 0..3, 0..5),
        pick in 0usize..4,
        both in any::<bool>(),
    ) {
        let BlockEdit { lines: text_lines, text, block, old_exact, begin, at, del, ins, new_block, .. } =
            block_edit(draw)?;
        prop_assume!(new_block != block);
        let expected = format!("{}{}{}", &text[..begin], join(&new_block), &text[begin + old_exact.len()..]);
        let expected_lines: Vec<String> = expected.lines().map(str::to_owned).collect();
        prop_assume!(no_double_blank(&expected_lines));
        // A blank line the edit keeps, inside old_string (not its first or last line).
        let kept: Vec<usize> = (1..block.len() - 1).filter(|&i| block[i].is_empty() && (i < at || i >= at + del)).collect();
        prop_assume!(!kept.is_empty());
        let blank = kept[pick % kept.len()];
        let mut old = block.clone();
        old.remove(blank);
        let mut new = new_block.clone();
        if both {
            new.remove(if blank < at { blank } else { blank - del + ins.len() });
        }
        // old_string is nowhere in the text, exactly or line for line with whitespace aside: a
        // stricter stage would rightly take that place.
        let collapsed = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
        let old_keys: Vec<String> = old.iter().map(|l| collapsed(l)).collect();
        let keys: Vec<String> = text_lines.iter().map(|l| collapsed(l)).collect();
        prop_assume!(keys.windows(old_keys.len()).all(|w| w != &old_keys[..]));
        let (old, new) = (join(&old), join(&new));
        prop_assume!(old != new && !text.contains(&old));
        if let Ok(m) = find(&text, &old, &new, LineEnding::Lf) {
            let got = format!("{}{}{}", &text[..m.start], m.replacement, &text[m.end..]);
            prop_assert_eq!(got, expected, "{} placed wrong; text {:?} old_string {:?} new_string {:?}", m.strategy, text, old, new);
        }
    }

    /// The file already holds new_string, and old_string (as the model remembers the file
    /// before the edit, or with a blank line dropped) is found among new_string's lines once
    /// blank lines are ignored: the edit is refused, never made twice.
    #[test]
    fn an_edit_the_file_already_holds_is_refused(
        draw in draws(2..7, 0..2, 1..5),
        blank in 0usize..8,
    ) {
        let BlockEdit { text: before, start, block, old_exact, begin, ins, new_block, .. } =
            block_edit(draw)?;
        prop_assume!(ins.iter().any(|l| l.contains("changed_marker")));
        let text = format!("{}{}{}", &before[..begin], join(&new_block), &before[begin + old_exact.len()..]);
        let mut old = block.clone();
        if blank < block.len() && old[blank].is_empty() {
            old.remove(blank);
        }
        prop_assume!(old.iter().any(|l| !l.trim().is_empty()));
        let (old, new) = (join(&old), join(&new_block));
        // old_string's lines, blank lines ignored, only inside new_string's place: nowhere
        // else is it a real target.
        let solid = |lines: &[&str]| -> Vec<String> {
            lines.iter().filter(|l| !l.trim().is_empty()).map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect()
        };
        let text_lines: Vec<&str> = text.lines().collect();
        let (first, last) = (start, start + new_block.len());
        let wanted = solid(&old.lines().collect::<Vec<_>>());
        let positions: Vec<usize> = (0..text_lines.len()).filter(|&i| !text_lines[i].trim().is_empty()).collect();
        let keys = solid(&text_lines);
        let elsewhere = (0..keys.len().saturating_sub(wanted.len() - 1)).any(|k| {
            keys[k..k + wanted.len()] == wanted[..] && (positions[k] < first || positions[k + wanted.len() - 1] >= last)
        });
        // Nor as a substring (the exact stage) outside it.
        let region = begin..begin + join(&new_block).len();
        let outside = occurrences(&text, &old).into_iter().any(|i| i < region.start || i + old.len() > region.end);
        prop_assume!(!elsewhere && !outside);
        if let Ok(m) = find(&text, &old, &new, LineEnding::Lf) {
            let got = format!("{}{}{}", &text[..m.start], m.replacement, &text[m.end..]);
            prop_assert!(false, "{} applied again; text {:?} old_string {:?} new_string {:?} got {:?}", m.strategy, text, old, new, got);
        }
    }
}

proptest! {
    /// `replace_all` replaces exactly what `str::replace` does (leftmost, non-overlapping, also
    /// for needles that overlap themselves such as `aa` in `aaa`), and reports where the first
    /// replacement is.
    #[test]
    fn replace_all_is_str_replace(
        text in "[ab\n]{0,60}",
        old in "[ab\n]{1,4}",
        new in "[abc\n]{0,5}",
    ) {
        let replaced = tandem_text::matcher::replace_all(&text, &old, &new, LineEnding::Lf);
        match text.find(old.as_str()) {
            None => prop_assert!(replaced.is_err()),
            Some(first) => {
                let replaced = replaced.map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
                prop_assert_eq!(&replaced.text, &text.replace(old.as_str(), &new));
                prop_assert_eq!(replaced.count, text.matches(old.as_str()).count());
                prop_assert_eq!(replaced.start, first);
                prop_assert_eq!(replaced.first_end, first + new.len());
                prop_assert_eq!(replaced.line, text[..first].matches('\n').count() + 1);
            }
        }
    }
}

/// String-literal contents, each piece whole: plain text or one escape of the code's own.
const PIECES: &[&str] = &["a", "b c", r"\\", r"\n", r#"\""#, r"\t", "'", "{x}"];
const NAMES: &[&str] = &["x", "value", "out", "sep"];

/// A line of code, indented by spaces or a tab, with a string literal or without.
fn escaped_line((indent, shape, name, pieces): &(usize, usize, usize, Vec<usize>)) -> String {
    let content: String = pieces.iter().map(|&p| PIECES[p % PIECES.len()]).collect();
    let name = NAMES[name % NAMES.len()];
    let indent = ["", "    ", "\t", "        "][indent % 4];
    let body = match shape % 5 {
        0 => format!("let {name} = \"{content}\";"),
        1 => format!("println!(\"{content}\");"),
        2 => format!("call({name});"),
        3 => "}".to_owned(),
        _ => format!("if {name} == \"{content}\" {{"),
    };
    format!("{indent}{body}")
}

fn escaped_lines() -> impl Strategy<Value = (usize, usize, usize, Vec<usize>)> {
    (0usize..4, 0usize..5, 0usize..NAMES.len(), prop::collection::vec(0usize..PIECES.len(), 0..4))
}

/// How a model mangles the strings of an edit.
#[derive(Clone, Copy, Debug)]
enum Mangle {
    /// Line breaks written `\n` (the rest as the file has it).
    LineBreaks,
    /// Line breaks `\n`, tabs `\t`.
    LineBreaksAndTabs,
    /// Line breaks `\n`, quotes `\"` (backslashes as they are: this cannot always be undone).
    LineBreaksAndQuotes,
    /// Escaped as the body of a JSON string: `\\`, `\"`, `\n`, `\t`.
    Json,
}

fn mangle(text: &str, how: Mangle) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        match (how, c) {
            (_, '\n') => out.push_str(r"\n"),
            (Mangle::LineBreaksAndTabs | Mangle::Json, '\t') => out.push_str(r"\t"),
            (Mangle::LineBreaksAndQuotes | Mangle::Json, '"') => out.push_str(r#"\""#),
            (Mangle::Json, '\\') => out.push_str(r"\\"),
            _ => out.push(c),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, max_global_rejects: 1_000_000, ..ProptestConfig::default() })]

    /// An escaped edit changes only the lines it replaces, or is refused; where its escapes can
    /// be undone, it lands exactly.
    #[test]
    fn escaped_edits_change_only_the_lines_they_replace(
        source in prop::collection::vec(escaped_lines(), 6..24),
        start in 0usize..24,
        size in 2usize..5,
        at in 0usize..5,
        kind in 0usize..3,
        line in escaped_lines(),
        how in prop_oneof![
            Just(Mangle::LineBreaks),
            Just(Mangle::LineBreaksAndTabs),
            Just(Mangle::LineBreaksAndQuotes),
            Just(Mangle::Json),
        ],
    ) {
        let text_lines: Vec<String> = source.iter().map(escaped_line).collect();
        let (_, block, text, old_exact) = block_of(&text_lines, start, size)?;
        prop_assume!(text.matches(&old_exact).count() == 1);
        let at = at % size;
        let new_line = escaped_line(&line);
        // 0: a line inserted at `at`, 1: line `at` replaced, 2: line `at` removed.
        let mut edited = block.clone();
        let kept_after = match kind {
            0 => {
                edited.insert(at, new_line.clone());
                at
            }
            1 => {
                edited[at] = new_line.clone();
                at + 1
            }
            _ => {
                edited.remove(at);
                at + 1
            }
        };
        let new_exact = join(&edited);
        let (old, new) = (mangle(&old_exact, how), mangle(&new_exact, how));
        prop_assume!(old != new && !text.contains(&old));
        let begin = text.find(&old_exact).unwrap_or(0);
        let (before, after) = (&text[..begin], &text[begin + old_exact.len()..]);
        let Ok(m) = find(&text, &old, &new, LineEnding::Lf) else { return Ok(()) };
        let got = format!("{}{}{}", &text[..m.start], m.replacement, &text[m.end..]);
        let why = format!("{how:?} {}; text {text:?} old_string {old:?} new_string {new:?} got {got:?}", m.strategy);
        // Everything but the lines the edit replaces, byte for byte as it was.
        let (head, tail) = (join(&block[..at]), join(&block[kept_after..]));
        prop_assert!(got.starts_with(&format!("{before}{head}")), "changed above the edit: {}", why);
        prop_assert!(got.ends_with(&format!("{tail}{after}")), "changed below the edit: {}", why);
        prop_assert!(got.len() >= before.len() + head.len() + tail.len() + after.len(), "{}", why);
        // Placed, it is written exactly as meant: an escape that reads two ways is refused,
        // never guessed. (Quotes escaped over backslashes left as they are is lossy: `\\"` is
        // `\` and `\"` or `\\` and `"`; only its locality is checked.)
        if !matches!(how, Mangle::LineBreaksAndQuotes) {
            prop_assert_eq!(&got, &format!("{before}{new_exact}{after}"), "{}", why);
        }
    }
}
