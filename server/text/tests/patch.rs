//! Fixture tests of `tandem_text::patch`, as expect-test snapshots (`UPDATE_EXPECT=1` refreshes).
//!
//! `tests/patch_fixtures/<name>.diff` are real outputs of `git diff`, `git format-patch` and
//! `diff -Nru`; `tests/patch_fixtures/<name>/` holds the files they were made against. The other
//! cases are written inline. A snapshot shows each file's fate, the hunk reports, and the new
//! text, where `␍` is a carriage return, `⇥` a tab, `·` a trailing space, and `⊘` marks a last
//! line without a final newline (so that no editor can change a snapshot by trimming it).

use std::collections::BTreeMap;
use std::path::Path;

use expect_test::{Expect, expect};
use tandem_text::patch::{self, PatchError, PatchFormat};

type Files = BTreeMap<String, String>;

fn inline(files: &[(&str, &str)]) -> Files {
    files.iter().map(|(path, text)| ((*path).to_owned(), (*text).to_owned())).collect()
}

fn load_tree(root: &Path, dir: &Path, files: &mut Files) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            load_tree(root, &path, files);
        } else if let (Ok(text), Ok(relative)) = (std::fs::read_to_string(&path), path.strip_prefix(root)) {
            files.insert(relative.to_string_lossy().into_owned(), text);
        }
    }
}

fn fixture(name: &str) -> (String, Files) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/patch_fixtures");
    let diff_path = root.join(format!("{name}.diff"));
    let diff = std::fs::read_to_string(&diff_path).unwrap_or_else(|e| panic!("{}: {e}", diff_path.display()));
    let mut files = Files::new();
    load_tree(&root.join(name), &root.join(name), &mut files);
    (diff, files)
}

fn show_text(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (line, false),
        };
        out.push_str("    |");
        let visible = body.replace('\r', "␍").replace('\t', "⇥");
        let content = visible.trim_end_matches(' ');
        out.push_str(content);
        out.push_str(&"·".repeat(visible.len() - content.len()));
        if !newline {
            out.push('⊘');
        }
        out.push('\n');
    }
    out
}

/// Parses `diff`, picks the strip level against `files`, applies every file patch to its file
/// and describes the outcome.
fn render(diff: &str, files: &Files) -> String {
    let parsed = match patch::parse(diff) {
        Ok(parsed) => parsed,
        Err(err) => return format!("parse error: {err}\n{err:?}\n"),
    };
    let strip = patch::detect_strip(&parsed, &|path| files.contains_key(path));
    let format = match parsed.format {
        PatchFormat::Unified => "unified",
        PatchFormat::BeginPatch => "begin patch",
    };
    let mut out = format!("{format}, strip {strip}\n");
    for file in &parsed.files {
        let old = file.old_path.as_deref().and_then(|p| patch::strip_path(p, strip));
        let new = file.new_path.as_deref().and_then(|p| patch::strip_path(p, strip));
        let what = match (&old, &new) {
            (None, Some(new)) => format!("create {new}"),
            (Some(old), None) => format!("delete {old}"),
            (Some(old), Some(new)) if old != new => {
                format!("{} {old} → {new}", if file.copy { "copy" } else { "rename" })
            }
            (Some(old), Some(_)) => format!("modify {old}"),
            (None, None) => "(no path)".to_owned(),
        };
        out.push_str(&what);
        if file.old_mode.is_some() || file.new_mode.is_some() {
            out.push_str(&format!(
                " (mode {} → {})",
                file.old_mode.as_deref().unwrap_or("-"),
                file.new_mode.as_deref().unwrap_or("-")
            ));
        }
        out.push('\n');
        for note in &file.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        let before = old.as_ref().and_then(|p| files.get(p)).map_or("", String::as_str);
        match patch::apply(file, before) {
            Ok(applied) => {
                for hunk in &applied.hunks {
                    out.push_str(&format!(
                        "  hunk {}: {}, offset {}, at new line {}\n",
                        hunk.index, hunk.strategy, hunk.offset, hunk.line
                    ));
                    if hunk.fuzz > 0 {
                        out.push_str(&format!("    fuzz {}, ignored {:?}\n", hunk.fuzz, hunk.ignored));
                    }
                }
                if new.is_some() && applied.text != before {
                    out.push_str(&show_text(&applied.text));
                } else if new.is_some() {
                    out.push_str("  (text unchanged)\n");
                }
            }
            Err(err) => out.push_str(&format!("  error: {err}\n  {}\n", variant(&err))),
        }
    }
    out
}

/// The error's fields other than its message, to show what a caller can match on.
fn variant(err: &PatchError) -> String {
    match err {
        PatchError::HunkFailed { hunk, expected_line, closest, .. } => {
            format!("HunkFailed {{ hunk: {hunk}, expected_line: {expected_line:?}, closest: {closest:?} }}")
        }
        PatchError::Ambiguous { hunk, candidates, .. } => {
            format!("Ambiguous {{ hunk: {hunk}, candidates: {candidates:?} }}")
        }
        PatchError::AnchorNotFound { hunk, anchor, .. } => {
            format!("AnchorNotFound {{ hunk: {hunk}, anchor: {anchor:?} }}")
        }
        other => format!("{other:?}"),
    }
}

fn check(diff: &str, files: &[(&str, &str)], expect: Expect) {
    expect.assert_eq(&render(diff, &inline(files)));
}

fn check_fixture(name: &str, expect: Expect) {
    let (diff, files) = fixture(name);
    expect.assert_eq(&render(&diff, &files));
}

// ---------------------------------------------------------------- unified diffs, from real tools

#[test]
fn git_multi_file_diff() {
    // New file, modification, mode change, deletion, binary change, rename with and without
    // changes, all in one `git diff -M`.
    check_fixture(
        "git_multi",
        expect![[r#"
        unified, strip 1
        create CHANGELOG.md (mode - → 100644)
          hunk 1: exact, offset 0, at new line 1
            |tail call
        modify README.md
          hunk 1: exact, offset 0, at new line 1
            |# Geometry
            |
            |Points and distances.
            |Now with `is_origin`.
        modify build.sh (mode 100644 → 100755)
          note: file mode changes from 100644 to 100755: not applied, only the text is
          (text unchanged)
        delete docs/old-notes.txt (mode 100644 → -)
          hunk 1: exact, offset 0, at new line 1
        modify logo.png
          error: `logo.png` is changed as a binary file (`Binary files … differ` / `GIT binary patch`): the patch does not carry its content as text, so it cannot be applied; leave the file out of the patch and change it another way
          Binary { path: "logo.png" }
        rename src/util.rs → src/helpers.rs
          hunk 1: exact, offset 0, at new line 1
            |fn helper() -> u32 {
            |    42
            |}
            |
            |fn other() {}
        modify src/point.rs
          hunk 1: exact, offset 0, at new line 1
          hunk 2: exact, offset 0, at new line 18
            |use std::fmt;
            |use std::ops::Add;
            |
            |pub struct Point {
            |    pub x: i32,
            |    pub y: i32,
            |}
            |
            |impl Point {
            |    pub fn new(x: i32, y: i32) -> Self {
            |        Self { x, y }
            |    }
            |
            |    pub fn origin() -> Self {
            |        Self::new(0, 0)
            |    }
            |
            |    pub fn manhattan(&self) -> i32 {
            |        self.x.abs() + self.y.abs()
            |    }
            |
            |    pub fn is_origin(&self) -> bool {
            |        self.x == 0 && self.y == 0
            |    }
            |}
            |
            |impl fmt::Display for Point {
            |    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            |        write!(f, "({}, {})", self.x, self.y)
            |    }
            |}
        rename src/lib.rs → src/root.rs
          (text unchanged)
    "#]],
    );
}

#[test]
fn git_binary_patch_is_refused() {
    check_fixture(
        "git_binary_patch",
        expect![[r#"
        unified, strip 1
        modify logo.png
          error: `logo.png` is changed as a binary file (`Binary files … differ` / `GIT binary patch`): the patch does not carry its content as text, so it cannot be applied; leave the file out of the patch and change it another way
          Binary { path: "logo.png" }
    "#]],
    );
}

#[test]
fn format_patch_message_and_signature_are_ignored() {
    check_fixture(
        "format_patch",
        expect![[r#"
        unified, strip 1
        modify list.txt
          hunk 1: exact, offset 0, at new line 1
            |alpha
            |beta
            |GAMMA
            |delta
            |epsilon
    "#]],
    );
}

#[test]
fn diff_nru_with_timestamps() {
    check_fixture(
        "diff_u",
        expect![[r#"
        unified, strip 1
        create added.ini
          hunk 1: exact, offset 0, at new line 1
            |brand new
        modify conf.ini
          hunk 1: exact, offset 0, at new line 1
            |one
            |2
            |three
    "#]],
    );
}

#[test]
fn git_diff_of_a_crlf_file() {
    check_fixture(
        "git_crlf",
        expect![[r#"
        unified, strip 1
        modify win.txt
          hunk 1: exact, offset 0, at new line 1
            |first␍
            |second changed␍
            |third␍
            |fourth␍
    "#]],
    );
}

/// A CSV added with CRLF lines (most of the patch's lines end in `\r`): written with CRLF, as
/// `git apply` writes it.
#[test]
fn git_diff_adding_a_crlf_file() {
    check_fixture(
        "git_new_crlf_file",
        expect![[r#"
        unified, strip 1
        create bench/raw.csv (mode - → 100644)
          hunk 1: exact, offset 0, at new line 1
            |benchmark,engine,duration␍
            |linux_literal,rg,0.12␍
            |linux_literal,grep,0.31␍
            |linux_re,rg,0.20␍
            |linux_re,grep,1.02␍
            |subtitles,rg,0.05␍
            |subtitles,grep,0.44␍
            |unicode,rg,0.09␍
            |unicode,grep,0.71␍
    "#]],
    );
}

/// Every line of an LF file replaced by itself in CRLF: the file becomes CRLF.
#[test]
fn git_diff_converting_a_file_to_crlf() -> Result<(), PatchError> {
    let (diff, files) = fixture("git_to_crlf");
    let before = &files["docs/make.bat"];
    let parsed = patch::parse(&diff)?;
    let applied = patch::apply(&parsed.files[0], before)?;
    assert_eq!(applied.text, before.replace('\n', "\r\n"));
    Ok(())
}

/// And back: every line of a CRLF file replaced by itself in LF: the file becomes LF.
#[test]
fn git_diff_converting_a_file_to_lf() -> Result<(), PatchError> {
    let (diff, files) = fixture("git_to_lf");
    let before = &files["docs/make.bat"];
    let parsed = patch::parse(&diff)?;
    let applied = patch::apply(&parsed.files[0], before)?;
    assert_eq!(applied.text, before.replace("\r\n", "\n"));
    Ok(())
}

#[test]
fn git_quoted_path() {
    check_fixture(
        "git_quoted_path",
        expect![[r#"
        unified, strip 1
        modify dir/naïve file.txt
          hunk 1: exact, offset 0, at new line 1
            |hello
            |world
    "#]],
    );
}

#[test]
fn no_newline_at_end_of_file_on_either_side() {
    check_fixture(
        "git_no_newline",
        expect![[r#"
        unified, strip 1
        modify gain.txt
          hunk 1: exact, offset 0, at new line 1
            |keep
            |gain newline
        modify lose.txt
          hunk 1: exact, offset 0, at new line 1
            |keep
            |lose newline⊘
        modify neither.txt
          hunk 1: exact, offset 0, at new line 1
            |b
            |neither⊘
    "#]],
    );
}

#[test]
fn zero_context_insertions_and_deletions() {
    check_fixture(
        "git_zero_context",
        expect![[r#"
        unified, strip 1
        modify nums.txt
          hunk 1: unverified, offset 0, at new line 1
          hunk 2: unverified, offset 0, at new line 7
          hunk 3: exact, offset 0, at new line 12
          hunk 4: exact, offset 0, at new line 14
            |top
            |line 1
            |line 2
            |line 3
            |line 4
            |line 5
            |after five a
            |after five b
            |line 6
            |line 7
            |line 8
            |line 10
            |line 11
            |line twelve
    "#]],
    );
}

// ---------------------------------------------------------------- unified diffs, inline

#[test]
fn lf_patch_on_a_crlf_file_keeps_crlf() {
    let diff = "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
    check(
        diff,
        &[("w.txt", "one\r\ntwo\r\nthree\r\n")],
        expect![[r#"
        unified, strip 1
        modify w.txt
          hunk 1: exact, offset 0, at new line 1
            |one␍
            |2␍
            |three␍
    "#]],
    );
}

#[test]
fn crlf_patch_on_an_lf_file_keeps_lf() {
    let diff = "--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,3 +1,3 @@\r\n one\r\n-two\r\n+2\r\n three\r\n";
    check(
        diff,
        &[("w.txt", "one\ntwo\nthree\n")],
        expect![[r#"
        unified, strip 1
        modify w.txt
          hunk 1: exact, offset 0, at new line 1
            |one
            |2
            |three
    "#]],
    );
}

/// Lines a faithful patch adds in LF next to the LF lines of a mostly CRLF file stay LF (the
/// patch's context carries the file's line endings exactly, so its added lines' are meant).
#[test]
fn lf_lines_added_among_lf_lines_of_a_crlf_file_stay_lf() {
    let diff = "--- a/w.txt\n+++ b/w.txt\n@@ -2,2 +2,3 @@\n b\n+new\n c\n";
    check(
        diff,
        &[("w.txt", "a\r\nb\nc\nd\r\ne\r\n")],
        expect![[r#"
        unified, strip 1
        modify w.txt
          hunk 1: exact, offset 0, at new line 2
            |a␍
            |b
            |new
            |c
            |d␍
            |e␍
    "#]],
    );
}

/// A patch with CRLF lines added to an LF file, its headers in LF (git's diff of such a change;
/// half or more of its lines end in `\r`): the added lines are CRLF, the context stays LF.
#[test]
fn crlf_lines_added_by_a_mostly_crlf_patch_keep_crlf() {
    let diff = "--- a/w.txt\n+++ b/w.txt\n@@ -1,1 +1,6 @@\n one\n+two\r\n+three\r\n+four\r\n+five\r\n+six\r\n";
    check(
        diff,
        &[("w.txt", "one\n")],
        expect![[r#"
        unified, strip 1
        modify w.txt
          hunk 1: exact, offset 0, at new line 1
            |one
            |two␍
            |three␍
            |four␍
            |five␍
            |six␍
    "#]],
    );
}

#[test]
fn omitted_counts() {
    check(
        "--- a/x\n+++ b/x\n@@ -2 +2 @@\n-b\n+B\n",
        &[("x", "a\nb\nc\n")],
        expect![[r#"
        unified, strip 1
        modify x
          hunk 1: exact, offset 0, at new line 2
            |a
            |B
            |c
    "#]],
    );
}

#[test]
fn hunks_found_at_an_offset_carry_it_forward() {
    // The file gained 3 lines at the top and 2 more between the hunks since the diff was made.
    let diff = "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -8,3 +8,3 @@\n h\n-i\n+I\n j\n";
    let file = "new 1\nnew 2\nnew 3\na\nb\nc\nd\ne\nnew 4\nnew 5\nf\ng\nh\ni\nj\nk\n";
    check(
        diff,
        &[("f", file)],
        expect![[r#"
        unified, strip 1
        modify f
          hunk 1: offset, offset 3, at new line 5
          hunk 2: offset, offset 5, at new line 13
            |new 1
            |new 2
            |new 3
            |a
            |b
            |C
            |d
            |e
            |new 4
            |new 5
            |f
            |g
            |h
            |I
            |j
            |k
    "#]],
    );
}

#[test]
fn whitespace_tolerant_placement_keeps_the_files_whitespace() {
    // The file has trailing spaces, and a tab where the patch has spaces: the context lines keep
    // the file's version.
    let diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n fn main() {\n-    old();\n+    new();\n }\n@@ -5,2 +5,2 @@\n let  x = 1;\n-x\n+y\n";
    let file = "fn main() {   \n    old();\n}\n\nlet\tx =   1;\nx\n";
    check(
        diff,
        &[("f", file)],
        expect![[r#"
        unified, strip 1
        modify f
          hunk 1: whitespace, offset 0, at new line 1
          hunk 2: whitespace, offset 0, at new line 5
            |fn main() {···
            |    new();
            |}
            |
            |let⇥x =   1;
            |y
    "#]],
    );
}

#[test]
fn miscounted_hunk_is_taken_as_written_with_a_note() {
    // Models miscount: this header claims 5 old lines; the hunk has 3 before the next file.
    let diff = "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n";
    check(
        diff,
        &[("f", "a\nb\nc\nd\n"), ("g", "x\n")],
        expect![[r#"
        unified, strip 1
        modify f
          note: hunk 1: its header `@@ -1,5 +1,5 @@` counts 5 old and 5 new lines, but it has 3 and 3; the lines were used as written
          hunk 1: exact, offset 0, at new line 1
            |a
            |B
            |c
            |d
        modify g
          hunk 1: exact, offset 0, at new line 1
            |y
    "#]],
    );
}

#[test]
fn bare_hunk_header_is_found_by_context() {
    check(
        "--- a/f\n+++ b/f\n@@\n c\n-d\n+D\n",
        &[("f", "a\nb\nc\nd\ne\n")],
        expect![[r#"
        unified, strip 1
        modify f
          hunk 1: context, offset 0, at new line 3
            |a
            |b
            |c
            |D
            |e
    "#]],
    );
}

#[test]
fn deletion_of_a_changed_file_is_refused() {
    let diff = "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n";
    check(
        diff,
        &[("f", "a\nb\nadded later\n")],
        expect![[r#"
        unified, strip 1
        delete f (mode 100644 → -)
          error: the patch deletes `f`, but 1 line(s) of the file are not in the patch: the file changed since the patch was made; read it again and regenerate the patch
          DeleteMismatch { path: "f", remaining: 1 }
    "#]],
    );
}

#[test]
fn hunk_that_ended_the_file_is_tried_at_the_end_first() {
    // Three lines of context before the change and none after: the hunk ended the file. With
    // lines added above since, the same context (`    }` / `}`) also sits nearer to the stated
    // line; the end of the file wins.
    let diff = "--- a/f\n+++ b/f\n@@ -5,3 +5,4 @@\n     }\n }\n \n+fn c() {}\n";
    let file = "fn a() {\n    if x {\n    }\n}\n\nfn b() {\n    if y {\n    }\n}\n\n";
    check(
        diff,
        &[("f", file)],
        expect![[r#"
            unified, strip 1
            modify f
              hunk 1: offset, offset 3, at new line 8
                |fn a() {
                |    if x {
                |    }
                |}
                |
                |fn b() {
                |    if y {
                |    }
                |}
                |
                |fn c() {}
        "#]],
    );
}

#[test]
fn absurd_line_numbers_neither_overflow_nor_hang() {
    let diff = "--- a/f\n+++ b/f\n@@ -9223372036854775808,2 +18446744073709551615,2 @@\n a\n-b\n+c\n";
    check(
        diff,
        &[("f", "x\na\nb\n")],
        expect![[r#"
        unified, strip 1
        modify f
          hunk 1: offset, offset -1099511627774, at new line 2
            |x
            |a
            |c
    "#]],
    );
}

#[test]
fn git_copy() {
    let diff = "diff --git a/src/one.rs b/src/two.rs\nsimilarity index 80%\ncopy from src/one.rs\ncopy to src/two.rs\n--- a/src/one.rs\n+++ b/src/two.rs\n@@ -1 +1 @@\n-fn one() {}\n+fn two() {}\n";
    check(
        diff,
        &[("src/one.rs", "fn one() {}\n")],
        expect![[r#"
        unified, strip 1
        copy src/one.rs → src/two.rs
          hunk 1: exact, offset 0, at new line 1
            |fn two() {}
    "#]],
    );
}

// ---------------------------------------------------------------- unified diffs that must fail

#[test]
fn hunk_whose_context_is_absent() {
    let diff = "--- a/f\n+++ b/f\n@@ -10,4 +10,4 @@\n fn total(items: &[Item]) -> u32 {\n     let mut sum = 0;\n-    for item in items {\n+    for item in items.iter() {\n         sum += item.price;\n";
    let file = "\n\n\n\n\n\n\n\n\nfn total(items: &[Item]) -> u32 {\n    let mut total = 0;\n    for item in items {\n        total += item.price;\n    }\n}\n";
    check(
        diff,
        &[("f", file)],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 1 of `f` does not match at line 10, nor anywhere else in the file; the closest text is at line 10 (2 of 4 lines match; line 11 is `    let mut total = 0;` where the patch has `    let mut sum = 0;`); read the file again and regenerate the patch against its current content
          HunkFailed { hunk: 1, expected_line: Some(10), closest: Some(Closest { line: 10, matching: 2, total: 4, mismatch: Some(Mismatch { line: 11, file: "    let mut total = 0;", patch: "    let mut sum = 0;" }) }) }
    "#]],
    );
}

#[test]
fn changed_outer_context_is_fuzzed_like_patch_f2() {
    // The first context line changed since the patch was made; every other line matches.
    let diff = "--- a/f\n+++ b/f\n@@ -2,5 +2,5 @@\n fn total(items: &[Item]) -> u32 {\n     let mut sum = 0;\n-    for item in items {\n+    for item in items.iter() {\n         sum += item.price;\n     }\n";
    let file = "// prices\npub fn total(items: &[Item]) -> u32 {\n    let mut sum = 0;\n    for item in items {\n        sum += item.price;\n    }\n    sum\n}\n";
    check(
        diff,
        &[("f", file)],
        expect![[r#"
        unified, strip 1
        modify f
          hunk 1: fuzz, offset 0, at new line 3
            fuzz 1, ignored [Mismatch { line: 2, file: "pub fn total(items: &[Item]) -> u32 {", patch: "fn total(items: &[Item]) -> u32 {" }]
            |// prices
            |pub fn total(items: &[Item]) -> u32 {
            |    let mut sum = 0;
            |    for item in items.iter() {
            |        sum += item.price;
            |    }
            |    sum
            |}
    "#]],
    );
}

#[test]
fn fuzz_never_ignores_removed_or_inner_lines() {
    // The removed line changed: refused.
    let diff = "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a = 1\n b = 2\n-c = 3\n+c = 4\n d = 5\n e = 6\n";
    check(
        diff,
        &[("f", "a = 1\nb = 2\nc = 30\nd = 5\ne = 6\n")],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 1 of `f` does not match at line 1, nor anywhere else in the file; the closest text is at line 1 (4 of 5 lines match; line 3 is `c = 30` where the patch has `c = 3`); read the file again and regenerate the patch against its current content
          HunkFailed { hunk: 1, expected_line: Some(1), closest: Some(Closest { line: 1, matching: 4, total: 5, mismatch: Some(Mismatch { line: 3, file: "c = 30", patch: "c = 3" }) }) }
    "#]],
    );
    // Two changes three lines apart: the context between them is not fuzzed.
    let diff =
        "--- a/f\n+++ b/f\n@@ -1,7 +1,7 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n d = 4\n e = 5\n-f = 6\n+f = 60\n g = 7\n";
    check(
        diff,
        &[("f", "a = 1\nb = 2\nc = 3\nd = 40\ne = 5\nf = 6\ng = 7\n")],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 1 of `f` does not match at line 1, nor anywhere else in the file; the closest text is at line 1 (6 of 7 lines match; line 4 is `d = 40` where the patch has `d = 4`); read the file again and regenerate the patch against its current content
          HunkFailed { hunk: 1, expected_line: Some(1), closest: Some(Closest { line: 1, matching: 6, total: 7, mismatch: Some(Mismatch { line: 4, file: "d = 40", patch: "d = 4" }) }) }
    "#]],
    );
}

#[test]
fn a_stale_hunk_is_not_fuzzed_onto_a_lookalike_block_above() {
    // Two blocks alike but for their inner lines. The patch changes the attribute of the second;
    // that attribute was edited since. With outer context unchecked the hunk would fit the first
    // block; its own place holds it but for the changed line, so it is refused, never moved.
    let diff = "--- a/f\n+++ b/f\n@@ -10,7 +10,7 @@\n     pub mod inotify;\n }\n \n-#[cfg(linux)]\n+#[cfg(any(linux, bsd))]\n feature! {\n     #![feature = \"time\"]\n     pub mod timerfd;\n";
    let file = "#[cfg(linux)]\nfeature! {\n    #![feature = \"inotify\"]\n    pub mod wait;\n}\n\n#[cfg(linux)]\nfeature! {\n    #![feature = \"inotify\"]\n    pub mod inotify;\n}\n\n#[cfg(linux)] // changed since\nfeature! {\n    #![feature = \"time\"]\n    pub mod timerfd;\n}\n";
    let out = render(diff, &inline(&[("f", file)]));
    assert!(out.contains("error: hunk 1 of `f`"), "a stale hunk must be refused, not moved:\n{out}");
    assert!(out.contains("holds it with one line changed"), "{out}");
}

#[test]
fn fuzzed_hunk_must_fit_one_place_and_keep_some_context() {
    // With its changed context line unchecked, the hunk fits two places: refused.
    let diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n start\n-x = 1\n+x = 2\n end\n";
    check(
        diff,
        &[("f", "begin\nx = 1\nend\nbegin\nx = 1\nend\n")],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 1 of `f` does not match where its header says, and with 1 of its outer context lines left unchecked it fits more than one place: regenerate the patch against the current file
          Ambiguous { hunk: 1, candidates: [2, 5] }
    "#]],
    );
    // Both context lines changed: nothing but the removed line is left, in the middle of the
    // file: refused.
    check(
        diff,
        &[("f", "top\nbegin\nx = 1\nfinish\nbottom\n")],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 1 of `f` does not match at line 1, nor anywhere else in the file; the closest text is at line 2 (1 of 3 lines match; line 2 is `begin` where the patch has `start`); read the file again and regenerate the patch against its current content
          HunkFailed { hunk: 1, expected_line: Some(1), closest: Some(Closest { line: 2, matching: 1, total: 3, mismatch: Some(Mismatch { line: 2, file: "begin", patch: "start" }) }) }
    "#]],
    );
    // The same at the start of the file: anchored there, applied.
    let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n end\n";
    check(
        diff,
        &[("f", "x = 1\nfinish\nmore\n")],
        expect![[r#"
        unified, strip 1
        modify f
          hunk 1: fuzz, offset 0, at new line 1
            fuzz 1, ignored [Mismatch { line: 2, file: "finish", patch: "end" }]
            |x = 2
            |finish
            |more
    "#]],
    );
}

#[test]
fn hunk_fitting_equally_well_above_and_below_is_ambiguous() {
    // Stated at line 3; the file now has the context at lines 1 and 5, both 2 lines away.
    let diff = "--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n x = 1\n-y = 2\n+y = 3\n";
    check(
        diff,
        &[("f", "x = 1\ny = 2\nother\nother\nx = 1\ny = 2\n")],
        expect![[r#"
            unified, strip 1
            modify f
              hunk 1: offset, offset 2, at new line 5
                |x = 1
                |y = 2
                |other
                |other
                |x = 1
                |y = 3
        "#]],
    );
}

#[test]
fn whitespace_tolerant_match_in_two_places_is_ambiguous() {
    // No exact match; ignoring whitespace, lines 1 and 5 fit, both 2 lines from line 3.
    let diff = "--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n x  =  1\n-y = 2\n+y = 3\n";
    check(
        diff,
        &[("f", "x = 1\ny = 2\nother\nother\nx = 1\ny = 2\n")],
        expect![[r#"
            unified, strip 1
            modify f
              hunk 1: whitespace, offset 2, at new line 5
                |x = 1
                |y = 2
                |other
                |other
                |x = 1
                |y = 3
        "#]],
    );
}

#[test]
fn hunks_out_of_order_are_refused() {
    let diff = "--- a/f\n+++ b/f\n@@ -4,2 +4,2 @@\n d\n-e\n+E\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
    check(
        diff,
        &[("f", "a\nb\nc\nd\ne\n")],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 2 of `f` does not match at line 1, nor anywhere below line 5 where hunk 1 ends; it matches at line 1, above where hunk 1 ends (line 5): hunks must be in file order and must not overlap; read the file again and regenerate the patch against its current content
          HunkFailed { hunk: 2, expected_line: Some(1), closest: None }
    "#]],
    );
}

#[test]
fn zero_context_insertion_past_the_end_is_refused() {
    check(
        "--- a/f\n+++ b/f\n@@ -9,0 +10 @@\n+x\n",
        &[("f", "a\nb\n")],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 1 of `f` inserts after line 9, but the file has only 2 lines; regenerate the patch against the current file
          HunkFailed { hunk: 1, expected_line: Some(10), closest: None }
    "#]],
    );
}

#[test]
fn malformed_unified_patches() {
    let cases = [
        "",
        "just some text\nwith no diff in it\n",
        "--- a/f\n+++ b/f\n@@ -1,x +1 @@\n-a\n+b\n",
        "@@ -1 +1 @@\n-a\n+b\n",
        "+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
        "--- a/f\n+++ b/f\n\nno hunk\n",
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n",
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n",
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+c\n+d\n",
        "diff --cc f\n--- a/f\n+++ b/f\n@@@ -1 -1 +1 @@@\n- a\n +b\n",
        "*** a/f\n--- b/f\n***************\n*** 1 ****\n! a\n--- 1 ----\n! b\n",
        "--- a/f\n+++ b/f\n@@ -1,0 +1,0 @@\n",
    ];
    let out: String = cases.iter().map(|case| format!("{case:?}\n  → {}", render(case, &Files::new()))).collect();
    expect![[r#"
        ""
          → parse error: no patch found: expected a unified diff (`diff --git a/<path> b/<path>` or `--- a/<path>` and `+++ b/<path>` headers, each followed by `@@ -<line>,<count> +<line>,<count> @@` hunks) or a `*** Begin Patch` block
        NoPatch
        "just some text\nwith no diff in it\n"
          → parse error: no patch found: expected a unified diff (`diff --git a/<path> b/<path>` or `--- a/<path>` and `+++ b/<path>` headers, each followed by `@@ -<line>,<count> +<line>,<count> @@` hunks) or a `*** Begin Patch` block
        NoPatch
        "--- a/f\n+++ b/f\n@@ -1,x +1 @@\n-a\n+b\n"
          → parse error: line 3 of the patch: malformed hunk header `@@ -1,x +1 @@`: write `@@ -<old start>,<old count> +<new start>,<new count> @@` (for example `@@ -12,7 +12,8 @@`), or a bare `@@` to have the hunk found by its context
        Parse { line: 3, message: "malformed hunk header `@@ -1,x +1 @@`: write `@@ -<old start>,<old count> +<new start>,<new count> @@` (for example `@@ -12,7 +12,8 @@`), or a bare `@@` to have the hunk found by its context" }
        "@@ -1 +1 @@\n-a\n+b\n"
          → parse error: line 1 of the patch: this hunk has no file header above it: put `--- a/<path>` and `+++ b/<path>` lines before its `@@` line
        Parse { line: 1, message: "this hunk has no file header above it: put `--- a/<path>` and `+++ b/<path>` lines before its `@@` line" }
        "+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
          → parse error: line 1 of the patch: a `+++ b/<path>` line must directly follow a `--- a/<path>` line
        Parse { line: 1, message: "a `+++ b/<path>` line must directly follow a `--- a/<path>` line" }
        "--- a/f\n+++ b/f\n\nno hunk\n"
          → parse error: line 1 of the patch: `--- `/`+++ ` file headers with no hunk after them: follow them with `@@ -<line>,<count> +<line>,<count> @@` and the hunk's lines
        Parse { line: 1, message: "`--- `/`+++ ` file headers with no hunk after them: follow them with `@@ -<line>,<count> +<line>,<count> @@` and the hunk's lines" }
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n"
          → unified, strip 1
        modify f
          note: hunk 1: its header `@@ -1 +1 @@` counts 1 old and 1 new lines, but it has 1 and 2; the lines were used as written
          error: hunk 1 of `f` does not match at line 1, nor anywhere else in the file; read the file again and regenerate the patch against its current content
          HunkFailed { hunk: 1, expected_line: Some(1), closest: None }
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n"
          → parse error: line 4 of the patch: `\ No newline at end of file` must follow a line of the hunk
        Parse { line: 4, message: "`\\ No newline at end of file` must follow a line of the hunk" }
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+c\n+d\n"
          → parse error: line 6 of the patch: a line follows `\ No newline at end of file` on the same side: that marker belongs after the file's last line only
        Parse { line: 6, message: "a line follows `\\ No newline at end of file` on the same side: that marker belongs after the file's last line only" }
        "diff --cc f\n--- a/f\n+++ b/f\n@@@ -1 -1 +1 @@@\n- a\n +b\n"
          → parse error: line 4 of the patch: `@@@ -1 -1 +1 @@@` is a combined diff hunk (from a merge commit), which is not supported: diff against one parent
        Parse { line: 4, message: "`@@@ -1 -1 +1 @@@` is a combined diff hunk (from a merge commit), which is not supported: diff against one parent" }
        "*** a/f\n--- b/f\n***************\n*** 1 ****\n! a\n--- 1 ----\n! b\n"
          → parse error: line 1 of the patch: context diffs (`diff -c`, `***` / `---` headers) are not supported; send a unified diff (`diff -u`, `git diff`) or a `*** Begin Patch` block
        Parse { line: 1, message: "context diffs (`diff -c`, `***` / `---` headers) are not supported; send a unified diff (`diff -u`, `git diff`) or a `*** Begin Patch` block" }
        "--- a/f\n+++ b/f\n@@ -1,0 +1,0 @@\n"
          → parse error: line 3 of the patch: hunk 1 has no lines after its `@@` header
        Parse { line: 3, message: "hunk 1 has no lines after its `@@` header" }
    "#]].assert_eq(&out);
}

// ---------------------------------------------------------------- *** Begin Patch

#[test]
fn begin_patch_all_operations() {
    let diff = "\
*** Begin Patch
*** Add File: docs/new.md
+# New
+
+Text.
*** Delete File: old.txt
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet(name):
-    return \"Hello \" + name
+    return f\"Hello {name}\"
@@ def main():
     print(greet(\"world\"))
-    return 0
+    return 1
*** End of File
*** Update File: README
@@
 Usage:
-  run it
+  run it with --help
*** End Patch
";
    let app = "import sys\n\ndef greet(name):\n    return \"Hello \" + name\n\ndef main():\n    print(greet(\"world\"))\n    return 0\n";
    let files = [("old.txt", "bye\n"), ("src/app.py", app), ("README", "Title\n\nUsage:\n  run it\n")];
    check(
        diff,
        &files,
        expect![[r#"
        begin patch, strip 0
        create docs/new.md
          hunk 1: exact, offset 0, at new line 1
            |# New
            |
            |Text.
        delete old.txt
        rename src/app.py → src/main.py
          hunk 1: context, offset 0, at new line 4
          hunk 2: context, offset 0, at new line 7
            |import sys
            |
            |def greet(name):
            |    return f"Hello {name}"
            |
            |def main():
            |    print(greet("world"))
            |    return 1
        modify README
          hunk 1: context, offset 0, at new line 3
            |Title
            |
            |Usage:
            |  run it with --help
    "#]],
    );
}

#[test]
fn begin_patch_anchor_picks_the_right_duplicate() {
    // The same two lines are in both functions: the `@@` line says which one, and a stacked
    // `@@` narrows further (class, then method).
    let diff = "\
*** Begin Patch
*** Update File: m.py
@@ def second():
     x = 1
-    return x
+    return x + 1
@@ class B:
@@     def run(self):
-        pass
+        return 2
*** End Patch";
    let file = "def first():\n    x = 1\n    return x\n\ndef second():\n    x = 1\n    return x\n\nclass A:\n    def run(self):\n        pass\n\nclass B:\n    def run(self):\n        pass\n";
    check(
        diff,
        &[("m.py", file)],
        expect![[r#"
        begin patch, strip 0
        modify m.py
          hunk 1: context, offset 0, at new line 6
          hunk 2: context, offset 0, at new line 15
            |def first():
            |    x = 1
            |    return x
            |
            |def second():
            |    x = 1
            |    return x + 1
            |
            |class A:
            |    def run(self):
            |        pass
            |
            |class B:
            |    def run(self):
            |        return 2
    "#]],
    );
}

#[test]
fn begin_patch_tolerates_whitespace_and_typographic_punctuation() {
    // Hunk 1: trailing spaces in the file. Hunk 2: the model lost the indentation. Hunk 3: the
    // model typed curly quotes and an em dash for the file's ASCII.
    let diff = "\
*** Begin Patch
*** Update File: t.js
@@
 const a = 1;
-const b = 2;
+const b = 3;
@@
-if (ready) {
+if (ready && ok) {
@@
-log(\u{201C}done \u{2014} ok\u{201D});
+log(\"finished\");
*** End Patch";
    let file = "const a = 1;   \nconst b = 2;\n  if (ready) {\n  }\nlog(\"done - ok\");\n";
    check(
        diff,
        &[("t.js", file)],
        expect![[r#"
        begin patch, strip 0
        modify t.js
          hunk 1: whitespace, offset 0, at new line 1
          hunk 2: whitespace, offset 0, at new line 3
          hunk 3: punctuation, offset 0, at new line 5
            |const a = 1;···
            |const b = 3;
            |if (ready && ok) {
            |  }
            |log("finished");
    "#]],
    );
}

#[test]
fn begin_patch_lenient_syntax() {
    // A heredoc line before the patch, no `*** End Patch`, blank lines between sections, an
    // empty context line without its space, unified numbers after `@@`, and a trailing blank
    // context line standing for the end of the file.
    let diff = "apply_patch <<'EOF'\n*** Begin Patch\n\n*** Update File: a.rs\n@@ -1,4 +1,4 @@ fn main() {\n fn main() {\n     let x = 1;\n\n-    run(x);\n+    run(x + 1);\n }\n \n";
    check(
        diff,
        &[("a.rs", "fn main() {\n    let x = 1;\n\n    run(x);\n}\n")],
        expect![[r#"
        begin patch, strip 0
        modify a.rs
          hunk 1: context, offset 0, at new line 1
            |fn main() {
            |    let x = 1;
            |
            |    run(x + 1);
            |}
    "#]],
    );
}

#[test]
fn begin_patch_added_lines_only() {
    // With an `@@` line they go right below it; without one, at the end (as apply_patch does).
    let diff = "*** Begin Patch\n*** Update File: c.rs\n@@ use std::io;\n+use std::fmt;\n@@\n+// end\n*** End Patch\n";
    check(
        diff,
        &[("c.rs", "use std::io;\n\nfn main() {}\n")],
        expect![[r#"
        begin patch, strip 0
        modify c.rs
          hunk 1: context, offset 0, at new line 2
          hunk 2: append, offset 0, at new line 5
            |use std::io;
            |use std::fmt;
            |
            |fn main() {}
            |// end
    "#]],
    );
}

#[test]
fn begin_patch_on_a_crlf_file() {
    let diff = "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+2\n+2.5\n*** End Patch\n";
    check(
        diff,
        &[("w.txt", "one\r\ntwo\r\nthree\r\n")],
        expect![[r#"
        begin patch, strip 0
        modify w.txt
          hunk 1: context, offset 0, at new line 1
            |one␍
            |2␍
            |2.5␍
            |three␍
    "#]],
    );
}

#[test]
fn begin_patch_adding_a_crlf_file() {
    let diff = "*** Begin Patch\n*** Add File: data.csv\n+a,b\r\n+1,2\r\n+3,4\r\n*** End Patch\n";
    check(
        diff,
        &[],
        expect![[r#"
        begin patch, strip 0
        create data.csv
          hunk 1: exact, offset 0, at new line 1
            |a,b␍
            |1,2␍
            |3,4␍
    "#]],
    );
}

#[test]
fn begin_patch_converting_lines_to_crlf() {
    let diff = "*** Begin Patch\n*** Update File: run.bat\n@@\n-@echo off\n-cargo build\n+@echo off\r\n+cargo build\r\n*** End Patch\n";
    check(
        diff,
        &[("run.bat", "@echo off\ncargo build\n")],
        expect![[r#"
        begin patch, strip 0
        modify run.bat
          hunk 1: context, offset 0, at new line 1
            |@echo off␍
            |cargo build␍
    "#]],
    );
}

/// A `*** Begin Patch` written wholly in CRLF (pasted on Windows, its markers too) carries no
/// line endings of its own: the file keeps its own.
#[test]
fn begin_patch_pasted_in_crlf_on_an_lf_file() {
    let diff = "*** Begin Patch\r\n*** Update File: w.txt\r\n@@\r\n one\r\n-two\r\n+2\r\n*** End Patch\r\n";
    check(
        diff,
        &[("w.txt", "one\ntwo\nthree\n")],
        expect![[r#"
        begin patch, strip 0
        modify w.txt
          hunk 1: context, offset 0, at new line 1
            |one
            |2
            |three
    "#]],
    );
}

#[test]
fn begin_patch_move_without_changes() {
    let diff = "*** Begin Patch\n*** Update File: a/x.txt\n*** Move to: b/x.txt\n*** End Patch\n";
    check(
        diff,
        &[("a/x.txt", "same\n")],
        expect![[r#"
        begin patch, strip 0
        rename a/x.txt → b/x.txt
          (text unchanged)
    "#]],
    );
}

#[test]
fn begin_patch_ambiguous_hunk() {
    let diff = "*** Begin Patch\n*** Update File: r.rs\n@@\n     }\n-    Ok(())\n+    Ok(value)\n*** End Patch";
    let file = "fn a() {\n    if x {\n    }\n    Ok(())\n}\n\nfn b() {\n    if y {\n    }\n    Ok(())\n}\n";
    check(
        diff,
        &[("r.rs", file)],
        expect![[r#"
        begin patch, strip 0
        modify r.rs
          error: hunk 1 of `r.rs` fits at lines 3 and 9 (exactly): add an `@@ <line above the change, such as the enclosing function's signature>` header or more context lines so that it fits one place only
          Ambiguous { hunk: 1, candidates: [3, 9] }
    "#]],
    );
}

#[test]
fn begin_patch_ambiguous_anchor() {
    // `@@ fn new()` is in both impls, and the hunk's lines are below each.
    let diff = "*** Begin Patch\n*** Update File: s.rs\n@@ fn new() -> Self {\n-        Self { v: 0 }\n+        Self { v: 1 }\n*** End Patch";
    let file = "impl A {\n    fn new() -> Self {\n        Self { v: 0 }\n    }\n}\nimpl B {\n    fn new() -> Self {\n        Self { v: 0 }\n    }\n}\n";
    check(
        diff,
        &[("s.rs", file)],
        expect![[r#"
        begin patch, strip 0
        modify s.rs
          error: hunk 1 of `s.rs` fits at lines 3 and 8 (exactly), each below a line matching `@@ fn new() -> Self {`: add an `@@ <line above the change, such as the enclosing function's signature>` header or more context lines so that it fits one place only
          Ambiguous { hunk: 1, candidates: [3, 8] }
    "#]],
    );
}

#[test]
fn begin_patch_context_absent() {
    let diff = "*** Begin Patch\n*** Update File: q.py\n@@ def area(r):\n     pi = 3.14\n-    return pi * r * r\n+    return pi * r ** 2\n*** End Patch";
    let file = "def area(r):\n    pi = 3.14159\n    return pi * r * r\n";
    check(
        diff,
        &[("q.py", file)],
        expect![[r#"
        begin patch, strip 0
        modify q.py
          error: hunk 1 of `q.py` was not found below `@@ def area(r):` (line 1): its 2 context and removed lines are not in the file; the closest text is at line 2 (1 of 2 lines match; line 2 is `    pi = 3.14159` where the patch has `    pi = 3.14`); copy the context and `-` lines exactly from the current file (read it again if it may have changed)
          HunkFailed { hunk: 1, expected_line: Some(1), closest: Some(Closest { line: 2, matching: 1, total: 2, mismatch: Some(Mismatch { line: 2, file: "    pi = 3.14159", patch: "    pi = 3.14" }) }) }
    "#]],
    );
}

#[test]
fn begin_patch_anchor_not_found() {
    let diff = "*** Begin Patch\n*** Update File: q.py\n@@ def volume(r):\n-    x\n+    y\n*** End Patch";
    check(
        diff,
        &[("q.py", "def area(r):\n    x\n")],
        expect![[r#"
        begin patch, strip 0
        modify q.py
          error: hunk 1 of `q.py`: its header `@@ def volume(r):` matches no line of the file; the text after `@@` must be a line of the file above the change (such as the enclosing function's signature), or leave it out
          AnchorNotFound { hunk: 1, anchor: "def volume(r):" }
    "#]],
    );
}

#[test]
fn begin_patch_end_of_file_must_match_the_end() {
    let diff = "*** Begin Patch\n*** Update File: e.txt\n@@\n-x\n+y\n*** End of File\n*** End Patch";
    check(
        diff,
        &[("e.txt", "x\nmiddle\nx\n")],
        expect![[r#"
        begin patch, strip 0
        modify e.txt
          hunk 1: context, offset 0, at new line 3
            |x
            |middle
            |y
    "#]],
    );
}

#[test]
fn malformed_begin_patches() {
    let cases = [
        "*** Begin Patch\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: f\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: f\n@@\nnot prefixed\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: f\n*** End of File\n*** End Patch\n",
        "*** Begin Patch\n*** Add File:\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Rename File: f\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: f\n@@ fn x()\n*** End Patch\n",
    ];
    let out: String = cases.iter().map(|case| format!("{case:?}\n  → {}", render(case, &Files::new()))).collect();
    expect![[r#"
        "*** Begin Patch\n*** End Patch\n"
          → parse error: line 1 of the patch: the patch has no `*** Add File:`, `*** Update File:` or `*** Delete File:` section
        Parse { line: 1, message: "the patch has no `*** Add File:`, `*** Update File:` or `*** Delete File:` section" }
        "*** Begin Patch\n*** Update File: f\n*** End Patch\n"
          → parse error: line 2 of the patch: `*** Update File: f` has no hunks: add `@@` hunks of ` `/`-`/`+` lines, or leave the section out
        Parse { line: 2, message: "`*** Update File: f` has no hunks: add `@@` hunks of ` `/`-`/`+` lines, or leave the section out" }
        "*** Begin Patch\n*** Update File: f\n@@\nnot prefixed\n*** End Patch\n"
          → parse error: line 4 of the patch: `not prefixed` in the `*** Update File: f` section does not start with ` ` (context), `-` (removed), `+` (added) or `@@`: if it is an unchanged line, put a space before it
        Parse { line: 4, message: "`not prefixed` in the `*** Update File: f` section does not start with ` ` (context), `-` (removed), `+` (added) or `@@`: if it is an unchanged line, put a space before it" }
        "*** Begin Patch\n*** Update File: f\n*** End of File\n*** End Patch\n"
          → parse error: line 3 of the patch: `*** End of File` must follow the lines of a hunk
        Parse { line: 3, message: "`*** End of File` must follow the lines of a hunk" }
        "*** Begin Patch\n*** Add File:\n+x\n*** End Patch\n"
          → parse error: line 2 of the patch: `*** Add File:` needs a path after the colon
        Parse { line: 2, message: "`*** Add File:` needs a path after the colon" }
        "*** Begin Patch\n*** Rename File: f\n*** End Patch\n"
          → parse error: line 2 of the patch: found `*** Rename File: f`: expected `*** Add File: <path>`, `*** Update File: <path>`, `*** Delete File: <path>` or `*** End Patch` (every line of an added file starts with `+`; every line of an update hunk starts with ` `, `-`, `+` or `@@`)
        Parse { line: 2, message: "found `*** Rename File: f`: expected `*** Add File: <path>`, `*** Update File: <path>`, `*** Delete File: <path>` or `*** End Patch` (every line of an added file starts with `+`; every line of an update hunk starts with ` `, `-`, `+` or `@@`)" }
        "*** Begin Patch\n*** Update File: f\n@@ fn x()\n*** End Patch\n"
          → parse error: line 3 of the patch: `@@ fn x()` has no hunk lines under it
        Parse { line: 3, message: "`@@ fn x()` has no hunk lines under it" }
    "#]].assert_eq(&out);
}

// ---------------------------------------------------------------- paths

#[test]
fn strip_path_removes_leading_components() {
    let cases = [
        ("a/src/lib.rs", 0),
        ("a/src/lib.rs", 1),
        ("a/src/lib.rs", 2),
        ("a/src/lib.rs", 3),
        ("/abs/x", 1),
        ("a//b", 1),
        ("/dev/null", 0),
    ];
    let out: Vec<String> =
        cases.iter().map(|(path, strip)| format!("{path} -p{strip} → {:?}", patch::strip_path(path, *strip))).collect();
    expect![[r#"
        a/src/lib.rs -p0 → Some("a/src/lib.rs")
        a/src/lib.rs -p1 → Some("src/lib.rs")
        a/src/lib.rs -p2 → Some("lib.rs")
        a/src/lib.rs -p3 → None
        /abs/x -p1 → Some("abs/x")
        a//b -p1 → Some("b")
        /dev/null -p0 → None"#]]
    .assert_eq(&out.join("\n"));
}

#[test]
fn detect_strip_counts_existing_paths() -> Result<(), PatchError> {
    let git = patch::parse("--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n")?;
    let plain = patch::parse("--- src/x.rs\n+++ src/x.rs\n@@ -1 +1 @@\n-a\n+b\n")?;
    let deep = patch::parse("--- build/tmp/src/x.rs\n+++ build/tmp/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n")?;
    let new_file = patch::parse("--- /dev/null\n+++ b/new.rs\n@@ -0,0 +1 @@\n+a\n")?;
    let exists = |path: &str| path == "src/x.rs";
    let nothing = |_: &str| false;
    let levels = [
        patch::detect_strip(&git, &exists),
        patch::detect_strip(&plain, &exists),
        patch::detect_strip(&deep, &exists),
        patch::detect_strip(&new_file, &nothing),
        patch::detect_strip(&plain, &nothing),
    ];
    assert_eq!(levels, [1, 0, 2, 1, 0]);
    Ok(())
}

#[test]
fn fuzz_keeps_a_hunk_that_ends_the_file_at_its_end() {
    // The file's last line (no final newline) changed since; the hunk still ends the file.
    let diff =
        "--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a = 1\n-b = 2\n+b = 3\n c = 3\n d = 4\n\\ No newline at end of file\n";
    check(
        diff,
        &[("f", "a = 1\nb = 2\nc = 3\nd = 40")],
        expect![[r#"
        unified, strip 1
        modify f
          hunk 1: fuzz, offset 0, at new line 1
            fuzz 1, ignored [Mismatch { line: 4, file: "d = 40", patch: "d = 4" }]
            |a = 1
            |b = 3
            |c = 3
            |d = 40⊘
    "#]],
    );
    // The same lines, not at the end: refused.
    check(
        diff,
        &[("f", "a = 1\nb = 2\nc = 3\nd = 40\ne = 5")],
        expect![[r#"
        unified, strip 1
        modify f
          error: hunk 1 of `f` does not match at line 1, nor anywhere else in the file; the closest text is at line 1 (3 of 4 lines match; line 4 is `d = 40` where the patch has `d = 4`); read the file again and regenerate the patch against its current content
          HunkFailed { hunk: 1, expected_line: Some(1), closest: Some(Closest { line: 1, matching: 3, total: 4, mismatch: Some(Mismatch { line: 4, file: "d = 40", patch: "d = 4" }) }) }
    "#]],
    );
}
