//! Property: an edit placed by the matcher lands exactly as intended or is refused, whatever
//! the drift between `old_string` and the file: indentation off in `old_string` only or in both
//! strings, trailing whitespace, tabs for spaces, a dropped blank line, a misremembered word on a
//! line the edit changes or on one it keeps. Texts are made of few distinct words, so that lines
//! repeat and blocks resemble each other (the hard case for a fuzzy matcher).

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
    prop_oneof![
        Just(Drift::None),
        Just(Drift::IndentOld),
        Just(Drift::IndentBoth),
        Just(Drift::TrailingBoth),
        Just(Drift::TabsBoth),
        Just(Drift::BlankOld),
        Just(Drift::WordOnChangedLine),
        Just(Drift::WordOnKeptLineBoth),
    ]
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
        prop_assume!(size < text_lines.len());
        let start = start % (text_lines.len() - size);
        let block: Vec<String> = text_lines[start..start + size].to_vec();
        let text = join(&text_lines);
        let old_exact = join(&block);
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
