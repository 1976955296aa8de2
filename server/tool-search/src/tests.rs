//! Fixture-driven tests of the search tools through the registry, with snapshot expectations.
//! A fixture is a set of files (`//- path` headers). `UPDATE_EXPECT=1` refreshes the expectations.

use expect_test::{Expect, expect};
use serde_json::{Value, json};

use tandem_tool_api::testing::Harness;

fn check(fixture: &str, name: &str, args: Value, expect: Expect) {
    Harness::new(fixture, crate::all()).check_call(name, args, expect);
}

const TREE: &str = "
    //- .gitignore
    target/
    *.log
    //- src/main.rs
    fn main() {}
    //- src/lib.rs
    pub fn lib() {}
    //- src/ui/app.ts
    export const app = 1;
    //- src/ui/view.tsx
    export const View = () => null;
    //- target/debug/out.rs
    fn generated() {}
    //- build.log
    log
    //- .hidden/secret.rs
    fn secret() {}
    //- .env.rs
    fn env() {}
    //- README.md
    # Readme
";

#[test]
fn glob_respects_ignore_files_and_hidden_and_sorts_by_path_or_mtime() {
    let harness = Harness::new(TREE, crate::all());
    harness.touch("src/main.rs", 1_000);
    harness.touch("src/lib.rs", 3_000);
    harness.touch("src/ui/app.ts", 2_000);
    harness.touch("src/ui/view.tsx", 2_000);
    harness.touch("README.md", 4_000);
    harness.check_call(
        "glob",
        json!({"pattern": "**/*.rs"}),
        expect![[r#"
            title: Found 2 files matching **/*.rs
            src/lib.rs
            src/main.rs
            meta: count=2 total=2 truncated=false
        "#]],
    );
    harness.check_call(
        "glob",
        json!({"pattern": "**/*", "sort": "modified"}),
        expect![[r#"
            title: Found 5 files matching **/*
            README.md
            src/lib.rs
            src/ui/app.ts
            src/ui/view.tsx
            src/main.rs
            meta: count=5 total=5 truncated=false
        "#]],
    );
    harness.check_call(
        "glob",
        json!({"pattern": "**/*"}),
        expect![[r#"
            title: Found 5 files matching **/*
            README.md
            src/lib.rs
            src/main.rs
            src/ui/app.ts
            src/ui/view.tsx
            meta: count=5 total=5 truncated=false
        "#]],
    );
    harness.check_call(
        "find_files",
        json!({"pattern": "*.{ts,tsx}", "path": "src/ui"}),
        expect![[r#"
            title: Found 2 files matching *.{ts,tsx}
            src/ui/app.ts
            src/ui/view.tsx
            meta: count=2 total=2 truncated=false
        "#]],
    );
    harness.check_call(
        "glob",
        json!({"pattern": "*.rs"}),
        expect![[r#"
            title: Found 0 files matching *.rs
            No files matching `*.rs` in `.`.
            meta: count=0 total=0 truncated=false
        "#]],
    );
    harness.check_call(
        "glob",
        json!({"pattern": "**/*", "max_results": 2}),
        expect![[r#"
            title: Found 5 files matching **/*
            README.md
            src/lib.rs
            … 3 more not shown; narrow the search with a more specific pattern or path
            meta: count=2 total=5 truncated=true
        "#]],
    );
    harness.check_call(
        "glob",
        json!({"pattern": "a{b"}),
        expect![[r#"
            error: invalid glob pattern `a{b`: error parsing glob 'a{b': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)
        "#]],
    );
}

const CODE: &str = "
    //- src/a.rs
    fn alpha() {
        let Value = 1;
        let value = 2;
    }
    //- src/b.rs
    fn beta() {
        value();
    }
    //- notes.md
    the value of notes
    //- script.py
    value = 3
";

#[test]
fn grep_content_files_and_count_modes() {
    check(
        CODE,
        "grep",
        json!({"pattern": "value"}),
        expect![[r#"
            title: Found 5 matches in 4 files for value
            notes.md:1:the value of notes
            script.py:1:value = 3
            src/a.rs:2:    let Value = 1;
            src/a.rs:3:    let value = 2;
            src/b.rs:2:    value();
            meta: files=4 matches=5 truncated=false
        "#]],
    );
    check(
        CODE,
        "search",
        json!({"pattern": "value", "output_mode": "files_with_matches"}),
        expect![[r#"
            title: Found 4 files with matches for value
            notes.md
            script.py
            src/a.rs
            src/b.rs
            meta: files=4 truncated=false
        "#]],
    );
    check(
        CODE,
        "grep",
        json!({"pattern": "value", "output_mode": "count", "path": "src"}),
        expect![[r#"
            title: Found 3 matches in 2 files for value
            src/a.rs:2
            src/b.rs:1
            meta: files=2 matches=3 truncated=false
        "#]],
    );
    check(
        CODE,
        "grep",
        json!({"pattern": "nothing here"}),
        expect![[r#"
            title: Found 0 matches in 0 files for nothing here
            No matches for `nothing here` in `.`.
            meta: files=0 matches=0 truncated=false
        "#]],
    );
}

#[test]
fn grep_smart_case_and_explicit_case() {
    check(
        CODE,
        "grep",
        json!({"pattern": "Value", "path": "src"}),
        expect![[r#"
            title: Found 1 matches in 1 files for Value
            src/a.rs:2:    let Value = 1;
            meta: files=1 matches=1 truncated=false
        "#]],
    );
    check(
        CODE,
        "grep",
        json!({"pattern": "value", "path": "src/a.rs", "case_insensitive": false}),
        expect![[r#"
            title: Found 1 matches in 1 files for value
            src/a.rs:3:    let value = 2;
            meta: files=1 matches=1 truncated=false
        "#]],
    );
    check(
        CODE,
        "grep",
        json!({"pattern": "VALUE", "path": "src/a.rs", "case_insensitive": true}),
        expect![[r#"
            title: Found 2 matches in 1 files for VALUE
            src/a.rs:2:    let Value = 1;
            src/a.rs:3:    let value = 2;
            meta: files=1 matches=2 truncated=false
        "#]],
    );
}

#[test]
fn grep_type_and_glob_filters() {
    check(
        CODE,
        "grep",
        json!({"pattern": "value", "type": "py"}),
        expect![[r#"
            title: Found 1 matches in 1 files for value
            script.py:1:value = 3
            meta: files=1 matches=1 truncated=false
        "#]],
    );
    check(
        CODE,
        "grep",
        json!({"pattern": "value", "glob": "*.{md,py}", "output_mode": "files_with_matches"}),
        expect![[r#"
            title: Found 2 files with matches for value
            notes.md
            script.py
            meta: files=2 truncated=false
        "#]],
    );
    check(
        CODE,
        "grep",
        json!({"pattern": "value", "glob": "src/**/b.rs", "output_mode": "files_with_matches"}),
        expect![[r#"
            title: Found 1 files with matches for value
            src/b.rs
            meta: files=1 truncated=false
        "#]],
    );
    check(
        CODE,
        "grep",
        json!({"pattern": "value", "type": "nosuchtype"}),
        expect![[r#"
            error: unknown file type `nosuchtype` (unrecognized file type: nosuchtype); use a ripgrep type name such as `rust`, `py`, `js`, `ts`, `go`, `md`, or filter with `glob`
        "#]],
    );
}

#[test]
fn grep_context_lines() {
    let fixture = "
        //- f.txt
        one
        two
        hit 1
        four
        five
        six
        seven
        hit 2
        nine
    ";
    check(
        fixture,
        "grep",
        json!({"pattern": "hit", "context": 1}),
        expect![[r#"
            title: Found 2 matches in 1 files for hit
            f.txt-2-two
            f.txt:3:hit 1
            f.txt-4-four
            --
            f.txt-7-seven
            f.txt:8:hit 2
            f.txt-9-nine
            meta: files=1 matches=2 truncated=false
        "#]],
    );
    check(
        fixture,
        "grep",
        json!({"pattern": "hit", "context_before": 2, "context_after": 0}),
        expect![[r#"
            title: Found 2 matches in 1 files for hit
            f.txt-1-one
            f.txt-2-two
            f.txt:3:hit 1
            --
            f.txt-6-six
            f.txt-7-seven
            f.txt:8:hit 2
            meta: files=1 matches=2 truncated=false
        "#]],
    );
}

#[test]
fn grep_multiline_binary_invalid_regex_and_truncation() {
    let fixture = "
        //- a.rs
        fn start() {
            body();
        }
        //- bin.dat
        value<NUL>value
        //- plain.txt
        value
        //- many.txt
        x 1
        x 2
        x 3
        x 4
    ";
    check(
        fixture,
        "grep",
        json!({"pattern": r"start\(\) \{.*?body", "multiline": true}),
        expect![[r#"
            title: Found 2 matches in 1 files for start\(\) \{.*?body
            a.rs:1:fn start() {
            a.rs:2:    body();
            meta: files=1 matches=2 truncated=false
        "#]],
    );
    check(
        fixture,
        "grep",
        json!({"pattern": r"start\(\) \{.*?body"}),
        expect![[r#"
        title: Found 0 matches in 0 files for start\(\) \{.*?body
        No matches for `start\(\) \{.*?body` in `.`.
        meta: files=0 matches=0 truncated=false
    "#]],
    );
    check(
        fixture,
        "grep",
        json!({"pattern": "value"}),
        expect![[r#"
        title: Found 1 matches in 1 files for value
        plain.txt:1:value
        meta: files=1 matches=1 truncated=false
    "#]],
    );
    check(
        fixture,
        "grep",
        json!({"pattern": "fn start("}),
        expect![[r#"
        error: invalid regex `fn start(`: regex parse error:
            (?:fn start()
            ^
        error: unclosed group
        The pattern is a Rust regular expression: to match one of `( ) [ ] { } . * + ? | \ ^ $` literally, escape it with `\` (e.g. `fn foo\(` or `a\.b`)
        meta: invalidRegex=true
    "#]],
    );
    check(
        fixture,
        "grep",
        json!({"pattern": "x", "max_results": 2}),
        expect![[r#"
        title: Found 4 matches in 1 files for x
        many.txt:1:x 1
        many.txt:2:x 2
        … 2 more matching lines not shown (4 in 1 files); narrow the search with path, glob or type, or raise max_results
        meta: files=1 matches=4 truncated=true
    "#]],
    );
    check(
        fixture,
        "grep",
        json!({"pattern": "x", "max_results": 2, "context_after": 1}),
        expect![[r#"
        title: Found 4 matches in 1 files for x
        many.txt:1:x 1
        many.txt:2:x 2
        … 2 more matching lines not shown (4 in 1 files); narrow the search with path, glob or type, or raise max_results
        meta: files=1 matches=4 truncated=true
    "#]],
    );
}

#[test]
fn grep_searches_the_unsaved_editor_buffer() {
    let harness = Harness::new(CODE, crate::all());
    let path = harness.root().join("src/b.rs");
    harness.ctx.cache.open(path, 1, "rust".into(), "fn beta() {\n    unsaved_value();\n}\n");
    harness.check_call(
        "grep",
        json!({"pattern": "value", "path": "src"}),
        expect![[r#"
        title: Found 3 matches in 2 files for value
        src/a.rs:2:    let Value = 1;
        src/a.rs:3:    let value = 2;
        src/b.rs:2:    unsaved_value();
        meta: files=2 matches=3 truncated=false
    "#]],
    );
    harness.check_call(
        "grep",
        json!({"pattern": "unsaved", "path": "src/b.rs"}),
        expect![[r#"
        title: Found 1 matches in 1 files for unsaved
        src/b.rs:2:    unsaved_value();
        meta: files=1 matches=1 truncated=false
    "#]],
    );
}

#[test]
fn grep_cuts_very_long_lines() {
    let h = Harness::new("", crate::all());
    let long = format!("{}needle{}\n", "a".repeat(300), "b".repeat(700));
    std::fs::write(h.root().join("minified.js"), &long).unwrap_or_else(|e| panic!("{e}"));
    let result = h.call("grep", serde_json::json!({"pattern": "needle"}));
    assert_eq!(result.error, None);
    let line = result.output.lines().next().unwrap_or_default();
    assert!(line.starts_with("minified.js:1:aaaa"), "{line}");
    assert!(line.ends_with("… [line cut: 1006 chars]"), "{line}");
    assert!(line.len() < 600, "{}", line.len());
}

/// A match before the first NUL byte, when that byte is past the first block the searcher
/// reads, is reported (as ripgrep does); a file that starts binary is skipped.
#[test]
fn grep_reports_matches_before_a_late_nul_byte() {
    let harness = Harness::new("//- a.txt\nplain\n", crate::all());
    let mut late = b"needle here\n".to_vec();
    late.extend(std::iter::repeat_n(b'x', 200 * 1024));
    late.extend(b"\0binary tail needle\n");
    std::fs::write(harness.root().join("late.bin"), late).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(harness.root().join("early.bin"), b"\0needle\n").unwrap_or_else(|e| panic!("{e}"));
    let result = harness.call("grep", json!({"pattern": "needle", "output_mode": "files_with_matches"}));
    assert_eq!(result.output, "late.bin", "{result:?}");
    let result = harness.call("grep", json!({"pattern": "needle"}));
    assert_eq!(result.output, "late.bin:1:needle here", "{result:?}");
}

mod bounded {
    use super::*;
    use proptest::prelude::*;

    /// Shown matches, in order, from a content-mode output.
    fn shown(output: &str) -> Vec<String> {
        output.lines().filter(|l| !l.starts_with('…') && l.contains(':')).map(str::to_owned).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Keeping at most `max_results` lines changes nothing that is shown: the output is the
        /// first `max` matches in path order of what an unbounded search finds, and the totals
        /// are the same.
        #[test]
        fn a_bounded_search_shows_what_an_unbounded_one_would(
            files in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 0..40), 1..12),
            max in 1usize..30,
        ) {
            let harness = Harness::new("//- .keep\n", crate::all());
            for (i, lines) in files.iter().enumerate() {
                let text: String = lines.iter().enumerate().map(|(n, hit)| if *hit { format!("hit {n}\n") } else { format!("miss {n}\n") }).collect();
                std::fs::write(harness.root().join(format!("f{i:02}.txt")), text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            let all = harness.call("grep", json!({"pattern": "hit", "max_results": 100_000}));
            let some = harness.call("grep", json!({"pattern": "hit", "max_results": max}));
            let expected: Vec<String> = shown(&all.output).into_iter().take(max).collect();
            prop_assert_eq!(shown(&some.output), expected);
            prop_assert_eq!(&some.metadata["matches"], &all.metadata["matches"]);
            prop_assert_eq!(&some.metadata["files"], &all.metadata["files"]);
            let count = harness.call("grep", json!({"pattern": "hit", "output_mode": "count"}));
            let per_file: usize = count.output.lines().filter_map(|l| l.rsplit(':').next()?.parse::<usize>().ok()).sum();
            prop_assert_eq!(Some(per_file as u64), all.metadata["matches"].as_u64().or(Some(0)).filter(|n| *n > 0).or(if per_file == 0 { Some(0) } else { None }));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// `glob` shows the first `max_results` of every match in byte order of the relative
        /// path (folders and names with `-`, `.`, `_` and digits, which sort differently by
        /// component and by byte), and counts them all.
        #[test]
        fn a_bounded_glob_shows_the_first_matches_in_path_order(
            paths in proptest::collection::btree_set("[ab][-._0-9a]{0,2}(/[ab][-._0-9]{0,2}){0,2}", 1..40),
            max in 1usize..20,
        ) {
            let harness = Harness::new("//- .keep\n", crate::all());
            let mut made = Vec::new();
            for path in &paths {
                let full = harness.root().join(path);
                // A path that is a prefix folder of another cannot also be a file.
                if std::fs::create_dir_all(full.parent().unwrap_or(harness.root())).is_err() || full.is_dir() {
                    continue;
                }
                if std::fs::write(&full, "x").is_ok() {
                    made.push(path.clone());
                }
            }
            made.retain(|p| harness.root().join(p).is_file());
            let mut expected: Vec<&str> = made.iter().map(String::as_str).collect();
            expected.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            let result = harness.call("glob", json!({"pattern": "**/*", "max_results": max}));
            let shown: Vec<&str> = result.output.lines().filter(|l| !l.starts_with('…')).collect();
            prop_assert_eq!(shown, expected.iter().take(max).copied().collect::<Vec<_>>());
            prop_assert_eq!(result.metadata["total"].as_u64(), Some(expected.len() as u64));
        }
    }

    /// Patterns built of the pieces people write (`**`, `*`, `?`, classes, alternatives,
    /// extensions, folders, literal names).
    fn pattern() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "**/", "**", "*", "?", "a", "b", "ab", ".rs", ".", "/", "{a,b}", "{a,.rs}", "[ab]", "[!a]", "src/", "*.rs",
            "*.toml", "a*", "-", "_",
        ]);
        proptest::collection::vec(piece, 1..6).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// The matcher `glob` walks with (a set of one glob, which takes shortcuts by extension,
        /// prefix, suffix or literal) says what the glob's own regex says, on every path a walk
        /// can yield.
        #[test]
        fn the_glob_matcher_agrees_with_the_globs_regex(
            pattern in pattern(),
            paths in proptest::collection::vec("(src/|a/|b/|ab/)?(src/|a/|b/)?[ab._-]{0,3}(\\.rs|\\.toml|\\.rs\\.bak)?", 1..30),
        ) {
            let Ok(ours) = crate::glob::matcher(&pattern) else {
                prop_assert!(globset::GlobBuilder::new(&pattern).literal_separator(true).build().is_err());
                return Ok(());
            };
            let reference = globset::GlobBuilder::new(&pattern).literal_separator(true).build().map_err(|e| TestCaseError::fail(e.to_string()))?.compile_matcher();
            // A walk never yields `.` or `..` as a name (globset's shortcuts see no file name
            // in `a/..`, as `Path` does not), so such paths are not asked about.
            for path in paths.iter().filter(|p| !p.split('/').any(|name| name == "." || name == "..")) {
                prop_assert_eq!(ours.is_match(path), reference.is_match(path), "pattern {} path {}", pattern, path);
            }
        }
    }
}
