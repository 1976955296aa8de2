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

/// A file indented with spaces, an edit written with tabs (`old_string` and `new_string`), and
/// `new_string` closing a block above `old_string`'s shallowest line: that line takes the
/// file's spaces for its level too (it kept its tab once, in a file of spaces).
#[test]
fn a_new_line_above_old_strings_base_is_moved_into_the_files_spaces() {
    let file = "mod tests {\n    fn a() {\n        if x {\n            f(\n                4\n            );\n        }\n\n        assert_eq!(\n            g(),\n            E\n        );\n    }\n}\n";
    check(
        file,
        "\t\t\t\t4\n\t\t\t);\n\t\t}\n\n\t\tassert_eq!(\n\t\t\tg(),\n",
        "\t\t\t\t4\n\t\t\t);\n\t\t}\n\t}\n\n\t#[test]\n\tfn b() {\n\t\tassert_eq!(\n\t\t\tg(),\n",
        expect![[r#"
            indentation-flexible at line 5 (similarity 1.00)
            mod tests {
                fn a() {
                    if x {
                        f(
                            4
                        );
                    }
                }

                #[test]
                fn b() {
                    assert_eq!(
                        g(),
                        E
                    );
                }
            }
        "#]],
    );
    // The file's base is not whole levels of its unit: no level of spaces stands for one tab.
    let odd = file.replace("\n        ", "\n         ").replace("\n            ", "\n             ");
    check(
        &odd,
        "\t\t\t\t4\n\t\t\t);\n\t\t}\n\n\t\tassert_eq!(\n\t\t\tg(),\n",
        "\t\t\t\t4\n\t\t\t);\n\t\t}\n\t}\n\n\t#[test]\n\tfn b() {\n\t\tassert_eq!(\n\t\t\tg(),\n",
        expect![[r#"refused (indentation-flexible) at line 5: indentation old "\t\t", file "         ", new "\t""#]],
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

const QUOTING: &str = r#"fn shell_quote(negated: &str) -> String {
    let mut out = String::from("'");
    out.push_str(negated);
    out.push('\'');
    println!("quoted \"{out}\"\tdone");
    out
}
"#;

/// The model wrote line breaks as `\n` and copied a Rust literal's `\\` as the file has it:
/// only the line breaks are decoded, the backslashes stay as written.
#[test]
fn escapes_decode_only_line_breaks_when_only_they_were_needed() {
    check(
        QUOTING,
        r#"let mut out = String::from("'");\n    out.push_str(negated);"#,
        r#"let mut out = String::from("'");\n    out.push_str(&negated.replace("'", "\\\\'"));"#,
        expect![[r#"
            escape-normalized at line 2 (similarity 1.00)
            fn shell_quote(negated: &str) -> String {
                let mut out = String::from("'");
                out.push_str(&negated.replace("'", "\\\\'"));
                out.push('\'');
                println!("quoted \"{out}\"\tdone");
                out
            }
        "#]],
    );
    // The file's own `\"` and `\t` in `old_string` are not decoded: they match as they are.
    check(
        QUOTING,
        r#"out.push('\'');\n    println!("quoted \"{out}\"\tdone");"#,
        r#"out.push('\'');\n    println!("quoted \"{out}\"\tdone!");"#,
        expect![[r#"
            escape-normalized at line 4 (similarity 1.00)
            fn shell_quote(negated: &str) -> String {
                let mut out = String::from("'");
                out.push_str(negated);
                out.push('\'');
                println!("quoted \"{out}\"\tdone!");
                out
            }
        "#]],
    );
}

/// Escaped as a JSON string is escaped (`\\`, `\"`, `\n`): every kind `old_string` needed is
/// decoded in `new_string` too.
#[test]
fn escapes_decode_every_kind_old_string_needed() {
    let text = "fn sep() -> &'static str {\n    let sep = \"\\\\\";\n    sep\n}\n";
    check(
        text,
        r#"let sep = \"\\\\\";\n    sep"#,
        r#"let sep = \"\\\\\";\n    let _ = \"\\n\";\n    sep"#,
        expect![[r#"
            escape-normalized at line 2 (similarity 1.00)
            fn sep() -> &'static str {
                let sep = "\\";
                let _ = "\n";
                sep
            }
        "#]],
    );
    // A line of `new_string` written as the file has it stays so, though `old_string` needed
    // `\\` decoded.
    check(
        text,
        r#"let sep = \"\\\\\";\n    sep"#,
        r#"let sep = "\\";\n    sep.trim()"#,
        expect![[r#"
            escape-normalized at line 2 (similarity 1.00)
            fn sep() -> &'static str {
                let sep = "\\";
                sep.trim()
            }
        "#]],
    );
}

/// The code's own `\n` read as a line break too: no reading matches but by the block anchor,
/// which forgives content, so the edit is refused rather than placed by a wrong reading.
#[test]
fn escapes_read_only_with_content_forgiven_are_refused() {
    let text = "let x = \"\";\nlet x = \"\";\n\t}\nif x == \"\\n\" {\n}\nlet x = \"\";\n";
    check(
        text,
        r#"let x = "";\n\t}\nif x == "\n" {\n}\n"#,
        r#"let x = "";\n\t}\nif x == "\n" {\nlet x = "";\n}\n"#,
        expect!["not found; closest lines 4-4 (0.53)"],
    );
}

/// Only line breaks were escaped, and `new_string` adds the code's own `\n` inside a quoted
/// literal (`b'\n'`, `"a\nb"`): that `\n` reads as a line break or as the code's escape, and
/// nothing in the strings tells which, so the edit is refused.
#[test]
fn escapes_inside_a_new_literal_read_two_ways_and_are_refused() {
    let text = "fn count(prefix: &[u8]) -> usize {\n    let line;\n    line = 0;\n    line\n}\n";
    check(
        text,
        r#"let line;\n    line = 0;"#,
        r#"let line;\n    line = memchr::memchr_iter(b'\n', prefix).count();"#,
        expect!["not found; closest lines 2-2 (0.52)"],
    );
    check(
        text,
        r#"let line;\n    line = 0;"#,
        r#"let line;\n    line = "a\nb".len();"#,
        expect!["not found; closest lines 2-2 (0.52)"],
    );
    // With `\\` decoded too, the model escaped the code's own backslashes: its `\\n` is the
    // code's `\n`, inside the literal, and its `\n` a line break.
    check(
        "let sep = \"\\\\\";\nsep\n",
        r#"let sep = \"\\\\\";\nsep"#,
        r#"let sep = \"\\\\\";\nlet _ = \"a\\nb\";\nsep"#,
        expect![[r#"
            escape-normalized at line 1 (similarity 1.00)
            let sep = "\\";
            let _ = "a\nb";
            sep
        "#]],
    );
    // `old_string`'s own escapes inside a literal were placed as line breaks by the file: a
    // string across lines, whose new line breaks are line breaks too.
    let text = "let s = r#\"\none\ntwo\n\"#;\n";
    check(
        text,
        r#"let s = r#"\none\ntwo"#,
        r#"let s = r#"\none\n2\ntwo"#,
        expect![[r##"
            escape-normalized at line 1 (similarity 1.00)
            let s = r#"
            one
            2
            two
            "#;
        "##]],
    );
    // Outside a literal, a `\n` is a line break as before.
    check(text, r#"let line;\n    line = 0;"#, r#"let line;\n    let _ = "a";\n    line = 1;"#, expect!["not found"]);
}

/// Two readings of the escapes place the edit at two places: refused.
#[test]
fn escapes_read_two_ways_are_ambiguous() {
    let text = "a(\"x\");\nb();\na(\\\"x\\\");\nb();\n";
    check(text, r#"a(\"x\");\nb();"#, r#"a(\"y\");\nb();"#, expect!["ambiguous (escape-normalized) at lines [1, 3]"]);
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

/// The edit lands exactly as `intended`, or is refused: never any other text.
fn intended_or_refused(text: &str, old: &str, new: &str, intended: &str) {
    if let Ok(m) = find(text, old, new, LineEnding::detect(text)) {
        let mut got = text.to_owned();
        got.replace_range(m.start..m.end, &m.replacement);
        assert!(got == intended || got == text, "written wrong ({}):\n{got}", m.strategy);
    }
}

// The next three are real hunks between crate versions (darling_core 0.20.11 → 0.24.1,
// libc 0.2.178 → 0.2.191, hashbrown 0.14.5 → 0.15.5), drifted the way the edit corpus drifts them.

#[test]
fn a_blank_line_dropped_from_both_strings_is_not_moved_by_the_diff_reading() {
    // The file's blank line between `}` and the doc comment is dropped from both strings. The
    // added function ends with `}` like the line before it, so the edit reads as "add the
    // function after the first `}`" (beside the blank line, which then lands before it) as well
    // as "add it before the second `}`" (the blank line stays after it, as intended).
    let text = "        .with_span(lit)
    }

    /// Creates a new error for a value which doesn't match a set of expected literals.
    pub fn unknown_value(value: &str) -> Self {
        Error::new(ErrorKind::UnknownValue(value.into()))
    }

    /// Creates a new error for a list which did not get enough items to proceed.
    pub fn too_few_items(min: usize) -> Self {
        Error::new(ErrorKind::TooFewItems(min))
    }
";
    let old = "
    /// Creates a new error for a value which doesn't match a set of expected literals.
    pub fn unknown_value(value: &str) -> Self {
        Error::new(ErrorKind::UnknownValue(value.into()))
    }
    /// Creates a new error for a list which did not get enough items to proceed.
";
    let new = "
    /// Creates a new error for a value which doesn't match a set of expected literals.
    pub fn unknown_value(value: &str) -> Self {
        Error::new(ErrorUnknownValue::new(UnknownValuePosition::Value, value).into())
    }

    pub fn unknown_value_with_alts<'a, T, I>(value: &str, alternates: I) -> Self
    where
        T: AsRef<str> + 'a,
        I: IntoIterator<Item = &'a T>,
    {
        Error::new(
            ErrorUnknownValue::with_alts(UnknownValuePosition::Value, value, alternates).into(),
        )
    }
    /// Creates a new error for a list which did not get enough items to proceed.
";
    let intended = "        .with_span(lit)
    }

    /// Creates a new error for a value which doesn't match a set of expected literals.
    pub fn unknown_value(value: &str) -> Self {
        Error::new(ErrorUnknownValue::new(UnknownValuePosition::Value, value).into())
    }

    pub fn unknown_value_with_alts<'a, T, I>(value: &str, alternates: I) -> Self
    where
        T: AsRef<str> + 'a,
        I: IntoIterator<Item = &'a T>,
    {
        Error::new(
            ErrorUnknownValue::with_alts(UnknownValuePosition::Value, value, alternates).into(),
        )
    }

    /// Creates a new error for a list which did not get enough items to proceed.
    pub fn too_few_items(min: usize) -> Self {
        Error::new(ErrorKind::TooFewItems(min))
    }
";
    intended_or_refused(text, old, new, intended);
    check(text, old, new, expect![[r#"refused (blank-lines): lines 3-9 differ: line 8: file [""], old_string []"#]]);
}

#[test]
fn a_blank_line_dropped_beside_the_change_is_not_moved_by_the_diff_reading() {
    // The blank line before `cfg_if!` is dropped from old_string only. new_string has two
    // `cfg_if! {` lines: the file's is the second (the blank line stays before it, as
    // intended), or the first (the removed line and the blank line go, and the blank line
    // lands before the new block).
    let text = "pub type nfds_t = u32;
pub type nlink_t = c_ushort;
pub type pthread_t = c_ulong;
pub type pthread_key_t = c_uint;
pub type rlim_t = u32;

cfg_if! {
    if #[cfg(target_os = \"horizon\")] {
        pub type sa_family_t = u16;
    } else {
        pub type sa_family_t = u8;
    }
}
";
    let old = "pub type nlink_t = c_ushort;
pub type pthread_t = c_ulong;
pub type pthread_key_t = c_uint;
pub type rlim_t = u32;
cfg_if! {
    if #[cfg(target_os = \"horizon\")] {
";
    let new = "pub type nlink_t = c_ushort;
pub type pthread_t = c_ulong;
pub type pthread_key_t = c_uint;
cfg_if! {
    if #[cfg(target_os = \"rtems\")] {
        pub type rlim_t = i64;
    } else {
        pub type rlim_t = u32;
    }
}

cfg_if! {
    if #[cfg(target_os = \"horizon\")] {
";
    let intended = "pub type nfds_t = u32;
pub type nlink_t = c_ushort;
pub type pthread_t = c_ulong;
pub type pthread_key_t = c_uint;
cfg_if! {
    if #[cfg(target_os = \"rtems\")] {
        pub type rlim_t = i64;
    } else {
        pub type rlim_t = u32;
    }
}

cfg_if! {
    if #[cfg(target_os = \"horizon\")] {
        pub type sa_family_t = u16;
    } else {
        pub type sa_family_t = u8;
    }
}
";
    intended_or_refused(text, old, new, intended);
    check(text, old, new, expect![[r#"refused (blank-lines): lines 2-8 differ: line 6: file [""], old_string []"#]]);
}

#[test]
fn an_edit_already_applied_is_refused_when_old_string_has_a_blank_line_more() {
    // The file holds new_string. old_string has a blank line before `impl` that the file no
    // longer has there; ignoring blank lines, old_string's lines are the end of new_string
    // (the added impl ends with `    }` and `}` too): the edit must not be made twice.
    let text = "impl<K: Debug, V: Debug, A: Allocator> fmt::Debug for IntoIter<K, V, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<K, V> Default for Keys<'_, K, V> {
    #[cfg_attr(feature = \"inline-more\", inline)]
    fn default() -> Self {
        Self {
            inner: Default::default(),
        }
    }
}
impl<'a, K, V> Iterator for Keys<'a, K, V> {
    type Item = &'a K;

    #[cfg_attr(feature = \"inline-more\", inline)]
    fn next(&mut self) -> Option<&'a K> {
";
    let old = "    }
}

impl<'a, K, V> Iterator for Keys<'a, K, V> {
    type Item = &'a K;

";
    let new = "    }
}

impl<K, V> Default for Keys<'_, K, V> {
    #[cfg_attr(feature = \"inline-more\", inline)]
    fn default() -> Self {
        Self {
            inner: Default::default(),
        }
    }
}
impl<'a, K, V> Iterator for Keys<'a, K, V> {
    type Item = &'a K;

";
    check(text, old, new, expect!["already applied (blank-lines) at line 13"]);
}

mod windowed {
    use proptest::prelude::*;

    use super::super::{line_at, occurrences_in};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// The windowed search finds what one search over the whole text finds (every
        /// occurrence, none overlapping, in order) and counts the first one's line as a count
        /// of every line before it does, whatever the window (occurrences across its edges,
        /// overlapping candidates, a needle longer than the window, an empty text).
        #[test]
        fn the_windowed_search_finds_and_counts_as_a_whole_search_does(
            text in "[ab\n]{0,200}",
            needle in "[ab\n]{1,6}",
            window in 1usize..40,
        ) {
            let whole: Vec<usize> = memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes()).collect();
            let (hits, line) = occurrences_in(text.as_bytes(), needle.as_bytes(), window);
            prop_assert_eq!(&hits, &whole);
            if let Some(&first) = whole.first() {
                prop_assert_eq!(line, line_at(&text, first));
            }
        }
    }
}

/// Two kinds of looseness, two places: `old_string` without the blank line between its two
/// lines fits the first pair (blank lines dropped), and equally the second pair (indentation
/// ignored). Neither stage is looser than the other, so the fit is a guess: refused.
#[test]
fn a_fit_by_indentation_and_another_by_blank_lines_elsewhere_are_ambiguous() {
    check(
        "\n\ncall();\n\ncall();\n    call();\n",
        "call();\ncall();\n",
        "changed_marker();\ncall();\n\ncall();\n",
        expect![[r#"ambiguous (indentation-flexible) at lines [5, 3]"#]],
    );
    // One place only: the blank-lines fit is taken.
    check(
        "\n\ncall();\n\ncall();\nreturn;\n",
        "call();\ncall();\n",
        "changed_marker();\ncall();\n\ncall();\n",
        expect![[r#"
            blank-lines at line 3 (similarity 1.00)


            changed_marker();
            call();

            call();
            return;
        "#]],
    );
}
