//! Fixture tests per stage, including the must-fail cases.

use expect_test::{Expect, expect};

use super::*;

/// Applies the edit and shows strategy, line, similarity and the result (or the error).
fn check(text: &str, old: &str, new: &str, expect: Expect) {
    let ending = LineEnding::detect(text);
    let shown = match find(text, old, new, ending) {
        Ok(m) => {
            let mut result = text.to_owned();
            result.replace_range(m.start..m.end, &m.replacement);
            let forgiven: String = m
                .forgiven
                .iter()
                .map(|d| format!("forgiven line {}: {:?} for {:?}\n", d.line, d.file, d.old))
                .collect();
            format!(
                "{} at line {} (similarity {:.2})\n{forgiven}{}",
                m.strategy,
                m.line,
                m.similarity,
                result.replace('\r', "<CR>")
            )
        }
        Err(MatchError::NotFound { closest }) => match closest {
            Some(c) => format!("not found; closest lines {}-{} ({:.2})", c.first_line, c.last_line, c.similarity),
            None => "not found".to_owned(),
        },
        Err(MatchError::Ambiguous { strategy, lines }) => format!("ambiguous ({strategy}) at lines {lines:?}"),
        Err(MatchError::Conflict { strategy, first_line, last_line, differences }) => {
            let shown: Vec<String> = differences
                .iter()
                .map(|d| format!("line {}: file {:?}, old_string {:?}", d.line, d.file, d.old))
                .collect();
            format!("refused ({strategy}): lines {first_line}-{last_line} differ: {}", shown.join("; "))
        }
        Err(MatchError::Indentation { strategy, first_line, old, file, new }) => {
            format!("refused ({strategy}) at line {first_line}: indentation old {old:?}, file {file:?}, new {new:?}")
        }
        Err(MatchError::AlreadyApplied { strategy, line }) => format!("already applied ({strategy}) at line {line}"),
    };
    expect.assert_eq(&shown);
}

const RUST: &str = "fn parse(input: &str) -> u32 {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return 0;
    }
    trimmed.parse().unwrap_or(0)
}

fn render(value: u32) -> String {
    format!(\"{value}\")
}
";

#[test]
fn exact_and_exact_ambiguity() {
    check(
        RUST,
        "return 0;",
        "return 1;",
        expect![[r#"
        exact at line 4 (similarity 1.00)
        fn parse(input: &str) -> u32 {
            let trimmed = input.trim();
            if trimmed.is_empty() {
                return 1;
            }
            trimmed.parse().unwrap_or(0)
        }

        fn render(value: u32) -> String {
            format!("{value}")
        }
    "#]],
    );
    check(RUST, "}\n", "};\n", expect!["ambiguous (exact) at lines [5, 7, 11]"]);
}

#[test]
fn trailing_whitespace_and_indentation() {
    check(
        RUST,
        "    if trimmed.is_empty() {   \n        return 0;  \n",
        "    if trimmed.is_empty() {\n        return 42;\n",
        expect![[r#"
        line-trimmed at line 3 (similarity 1.00)
        fn parse(input: &str) -> u32 {
            let trimmed = input.trim();
            if trimmed.is_empty() {
                return 42;
            }
            trimmed.parse().unwrap_or(0)
        }

        fn render(value: u32) -> String {
            format!("{value}")
        }
    "#]],
    );
    // The model dropped the block's indentation; its new text is re-indented to the block.
    check(
        RUST,
        "if trimmed.is_empty() {\n    return 0;\n}",
        "if trimmed.is_empty() {\n    return u32::MAX;\n}",
        expect![[r#"
        indentation-flexible at line 3 (similarity 1.00)
        fn parse(input: &str) -> u32 {
            let trimmed = input.trim();
            if trimmed.is_empty() {
                return u32::MAX;
            }
            trimmed.parse().unwrap_or(0)
        }

        fn render(value: u32) -> String {
            format!("{value}")
        }
    "#]],
    );
}

#[test]
fn tabs_versus_spaces_and_collapsed_whitespace() {
    let tabs = "def f():\n\tif x:\n\t\treturn  1\n\treturn 2\n";
    check(
        tabs,
        "    if x:\n        return 1\n",
        "    if x:\n        return 10\n",
        expect![[r#"
        whitespace-normalized at line 2 (similarity 1.00)
        def f():
        	if x:
        		return 10
        	return 2
    "#]],
    );
}

#[test]
fn escapes_unicode_and_line_numbers() {
    check(
        RUST,
        "if trimmed.is_empty() {\\n        return 0;",
        "if trimmed.is_empty() {\\n        return 7;",
        expect![[r#"
        escape-normalized at line 3 (similarity 1.00)
        fn parse(input: &str) -> u32 {
            let trimmed = input.trim();
            if trimmed.is_empty() {
                return 7;
            }
            trimmed.parse().unwrap_or(0)
        }

        fn render(value: u32) -> String {
            format!("{value}")
        }
    "#]],
    );
    let prose = "# Notes\n\nIt’s a “test” — really.\n";
    check(
        prose,
        "It's a \"test\" - really.",
        "It is a test.",
        expect![[r#"
        unicode-normalized at line 3 (similarity 1.00)
        # Notes

        It is a test.
    "#]],
    );
    check(
        RUST,
        "     9\tfn render(value: u32) -> String {\n    10\t    format!(\"{value}\")",
        "     9\tfn render(value: u64) -> String {\n    10\t    format!(\"{value}\")",
        expect![[r#"
        line-numbers at line 9 (similarity 1.00)
        fn parse(input: &str) -> u32 {
            let trimmed = input.trim();
            if trimmed.is_empty() {
                return 0;
            }
            trimmed.parse().unwrap_or(0)
        }

        fn render(value: u64) -> String {
            format!("{value}")
        }
    "#]],
    );
}

#[test]
fn blank_lines_dropped_or_added() {
    check(
        RUST,
        "    trimmed.parse().unwrap_or(0)\n}\nfn render(value: u32) -> String {\n",
        "    trimmed.parse().unwrap_or(1)\n}\n\nfn render(value: u32) -> String {\n",
        expect![[r#"
        blank-lines at line 6 (similarity 1.00)
        fn parse(input: &str) -> u32 {
            let trimmed = input.trim();
            if trimmed.is_empty() {
                return 0;
            }
            trimmed.parse().unwrap_or(1)
        }

        fn render(value: u32) -> String {
            format!("{value}")
        }
    "#]],
    );
}

#[test]
fn block_anchor_refuses_to_change_a_line_the_file_has_otherwise() {
    // The model misremembers the line it replaces: the block is found, the edit is refused.
    let old = "fn parse(input: &str) -> u32 {\n    let trimmed = input.trim();\n    if trimmed.is_empty() {\n        return 0;\n    }\n    trimmed.parse().unwrap_or_default()\n}\n";
    let new = "fn parse(input: &str) -> u32 {\n    input.trim().parse().unwrap_or(0)\n}\n";
    check(
        RUST,
        old,
        new,
        expect![[
            r#"refused (block-anchor): lines 1-7 differ: line 6: file ["    trimmed.parse().unwrap_or(0)"], old_string ["    trimmed.parse().unwrap_or_default()"]"#
        ]],
    );
}

#[test]
fn block_anchor_forgives_a_misremembered_line_the_edit_keeps() {
    // The misremembered line is one the edit keeps: the file's own text stays there.
    let old = "fn parse(input: &str) -> u32 {\n    let trimmed = input.trim();\n    if trimmed.is_empty() {\n        return 0;\n    }\n    trimmed.parse().unwrap_or_default()\n}\n";
    let new = "fn parse(input: &str) -> u32 {\n    let trimmed = input.trim();\n    if trimmed.is_empty() {\n        return 1;\n    }\n    trimmed.parse().unwrap_or_default()\n}\n";
    check(
        RUST,
        old,
        new,
        expect![[r#"
            block-anchor at line 1 (similarity 0.95)
            forgiven line 6: ["    trimmed.parse().unwrap_or(0)"] for ["    trimmed.parse().unwrap_or_default()"]
            fn parse(input: &str) -> u32 {
                let trimmed = input.trim();
                if trimmed.is_empty() {
                    return 1;
                }
                trimmed.parse().unwrap_or(0)
            }

            fn render(value: u32) -> String {
                format!("{value}")
            }
        "#]],
    );
}

#[test]
fn must_fail_cases() {
    // A wrong identifier on the first line: nothing anchors, nothing is applied.
    check(
        RUST,
        "fn parse_u32(input: &str) -> u32 {\n    let trimmed = input.trim();",
        "x",
        expect!["not found; closest lines 1-2 (0.95)"],
    );
    // A wrong identifier in the opening line of a block that ends with a common line.
    check(
        RUST,
        "    if trimmed.is_blank() {\n        return 0;\n    }",
        "x",
        expect!["not found; closest lines 3-5 (0.91)"],
    );
    // A wrong value in the only middle line of a three-line block: too little to anchor on.
    check(
        RUST,
        "fn render(value: u32) -> String {\n    format!(\"{val}\")\n}",
        "x",
        expect!["not found; closest lines 9-11 (0.96)"],
    );
    // Occurs twice once indentation is ignored.
    let twice = "fn a() {\n    call();\n}\nmod m {\n    fn a() {\n        call();\n    }\n}\n";
    check(twice, "fn a() {\n  call();\n}", "x", expect!["ambiguous (indentation-flexible) at lines [1, 5]"]);
    // A block much larger than old_string: the anchors match but the block is too long.
    let long: String = format!("start_marker();\n{}end_marker();\n", "    step();\n".repeat(20));
    check(
        &long,
        "start_marker();\n    step();\n    step();\nend_marker();\n",
        "x",
        expect!["not found; closest lines 19-22 (0.82)"],
    );
    // Nothing like it at all.
    check(RUST, "completely unrelated", "x", expect!["not found"]);
}

#[test]
fn crlf_files_keep_their_line_endings() {
    let text = "a = 1\r\n  b = 2\r\nc = 3\r\n";
    check(
        text,
        "a = 1\nb = 2\n",
        "a = 10\nb = 20\n",
        expect![[r#"
        indentation-flexible at line 1 (similarity 1.00)
        a = 10<CR>
          b = 20<CR>
        c = 3<CR>
    "#]],
    );
}

#[test]
fn a_blank_line_dropped_from_old_string_stays_once() {
    // old_string has two blank lines where the file has three; new_string has three.
    let text = "\n\n\n\n\n\n\n\n\n\n\nlet\n\n\n\nlet\n\n";
    check(
        text,
        "let\n\n\nlet\n\n",
        "changed_marker();\n\n\n\nlet\n\n",
        expect![[r#"
        blank-lines at line 12 (similarity 1.00)











        changed_marker();



        let

    "#]],
    );
}
