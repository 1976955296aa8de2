//! The languages the map outlines: each one's tree-sitter grammar and its tags query — the
//! grammar's own `tags.scm` (TypeScript's extends JavaScript's, as tree-sitter's tags
//! configuration does), after a small query of ours for the definitions the grammar's query
//! leaves out (constants, namespaces, type aliases, ...).

use std::sync::{LazyLock, OnceLock};

use serde::{Deserialize, Serialize};
use tree_sitter::Query;

/// A language the map knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lang {
    /// `.rs`
    Rust,
    /// `.py`, `.pyi`
    Python,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`
    JavaScript,
    /// `.ts`, `.mts`, `.cts`
    TypeScript,
    /// `.tsx`
    Tsx,
    /// `.go`
    Go,
    /// `.c`, `.h`
    C,
    /// `.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`
    Cpp,
    /// `.java`
    Java,
    /// `.rb`
    Ruby,
}

/// Every language, in a fixed order.
pub const ALL: [Lang; 10] = [
    Lang::Rust,
    Lang::Python,
    Lang::JavaScript,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::Go,
    Lang::C,
    Lang::Cpp,
    Lang::Java,
    Lang::Ruby,
];

impl Lang {
    /// By the file name's extension.
    pub fn of(file_name: &str) -> Option<Self> {
        let ext = file_name.rsplit_once('.')?.1;
        Some(match ext {
            "rs" => Self::Rust,
            "py" | "pyi" => Self::Python,
            "js" | "jsx" | "mjs" | "cjs" => Self::JavaScript,
            "ts" | "mts" | "cts" => Self::TypeScript,
            "tsx" => Self::Tsx,
            "go" => Self::Go,
            "c" | "h" => Self::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "C" | "H" => Self::Cpp,
            "java" => Self::Java,
            "rb" => Self::Ruby,
            _ => return None,
        })
    }

    /// The grammar.
    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::Go => tree_sitter_go::LANGUAGE.into(),
            Self::C => tree_sitter_c::LANGUAGE.into(),
            Self::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Self::Java => tree_sitter_java::LANGUAGE.into(),
            Self::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        }
    }

    /// The tags query: ours first (so its more precise kinds win where both name one
    /// definition), then the grammar's own.
    fn query_source(self) -> String {
        let grammar = match self {
            Self::Rust => tree_sitter_rust::TAGS_QUERY.to_owned(),
            Self::Python => tree_sitter_python::TAGS_QUERY.to_owned(),
            Self::JavaScript => tree_sitter_javascript::TAGS_QUERY.to_owned(),
            Self::TypeScript | Self::Tsx => {
                format!("{}\n{}", tree_sitter_javascript::TAGS_QUERY, tree_sitter_typescript::TAGS_QUERY)
            }
            Self::Go => tree_sitter_go::TAGS_QUERY.to_owned(),
            Self::C => tree_sitter_c::TAGS_QUERY.to_owned(),
            Self::Cpp => tree_sitter_cpp::TAGS_QUERY.to_owned(),
            Self::Java => tree_sitter_java::TAGS_QUERY.to_owned(),
            Self::Ruby => tree_sitter_ruby::TAGS_QUERY.to_owned(),
        };
        // C++ has C's preprocessor, and C's additions with it.
        let c = if self == Self::Cpp { extra(Self::C) } else { "" };
        format!("{c}{}\n{grammar}", extra(self))
    }

    /// The compiled tags query (once per process, when first needed), with only the patterns
    /// that tag definitions (the grammars' reference patterns cost matching time, and the
    /// outline finds the names a file uses by walking its tree); `None` only if it does not
    /// compile, which a test rules out for every language.
    pub(crate) fn query(self) -> Option<&'static Query> {
        static QUERIES: [OnceLock<Option<Query>>; ALL.len()] = [const { OnceLock::new() }; ALL.len()];
        let index = ALL.iter().position(|l| *l == self)?;
        QUERIES[index]
            .get_or_init(|| match Query::new(&self.grammar(), &self.query_source()) {
                Ok(mut query) => {
                    let defines: Vec<bool> =
                        query.capture_names().iter().map(|n| n.starts_with("definition.")).collect();
                    for pattern in 0..query.pattern_count() {
                        let tags_a_definition = query
                            .capture_quantifiers(pattern)
                            .iter()
                            .zip(&defines)
                            .any(|(q, d)| *d && *q != tree_sitter::CaptureQuantifier::Zero);
                        if !tags_a_definition {
                            query.disable_pattern(pattern);
                        }
                    }
                    Some(query)
                }
                Err(err) => {
                    tracing::error!("the tags query of {self:?} does not compile: {err}");
                    None
                }
            })
            .as_ref()
    }
}

/// Our additions to a grammar's tags query: definitions it does not tag.
fn extra(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => {
            r#"
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(function_signature_item name: (identifier) @name) @definition.method
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name) (scoped_type_identifier name: (type_identifier) @name)]) @definition.impl
"#
        }
        Lang::Python => "",
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            let shared = r#"
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(number) (string) (template_string) (object) (array) (call_expression) (new_expression) (member_expression) (binary_expression) (identifier) (true) (false)])) @definition.constant)
(export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name value: [(number) (string) (template_string) (object) (array) (call_expression) (new_expression) (member_expression) (binary_expression) (identifier) (true) (false)])) @definition.constant)
"#;
            if lang == Lang::JavaScript {
                shared
            } else {
                static TS: LazyLock<String> = LazyLock::new(|| {
                    format!(
                        "{}{}",
                        r#"
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.type
(interface_declaration name: (type_identifier) @name) @definition.interface
(internal_module name: (identifier) @name) @definition.module
"#,
                        r#"
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(number) (string) (template_string) (object) (array) (call_expression) (new_expression) (member_expression) (binary_expression) (identifier) (true) (false) (as_expression)])) @definition.constant)
(export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name value: [(number) (string) (template_string) (object) (array) (call_expression) (new_expression) (member_expression) (binary_expression) (identifier) (true) (false) (as_expression)])) @definition.constant)
"#
                    )
                });
                &TS
            }
        }
        Lang::Go => {
            r#"
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.constant))
"#
        }
        Lang::C => {
            r#"
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro
"#
        }
        // C's preprocessor too ([`Lang::query_source`] adds C's).
        Lang::Cpp => {
            r#"
(namespace_definition name: (namespace_identifier) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type
"#
        }
        Lang::Java => {
            r#"
(enum_declaration name: (identifier) @name) @definition.type
(record_declaration name: (identifier) @name) @definition.class
(field_declaration declarator: (variable_declarator name: (identifier) @name) (#match? @name "^[A-Z][A-Z0-9_]*$")) @definition.constant
"#
        }
        Lang::Ruby => {
            r#"
(program (assignment left: (constant) @name) @definition.constant)
(class body: (body_statement (assignment left: (constant) @name) @definition.constant))
(module body: (body_statement (assignment left: (constant) @name) @definition.constant))
"#
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles() {
        for lang in ALL {
            if let Err(err) = Query::new(&lang.grammar(), &lang.query_source()) {
                panic!("{lang:?}: {err}");
            }
        }
    }
}
