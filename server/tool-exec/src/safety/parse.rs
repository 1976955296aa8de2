//! The command line as a tree (tree-sitter's bash grammar, the parser GitHub and Codex use for
//! shell code), flattened into the simple commands it would run: every one, including those
//! inside pipelines, lists, subshells, command and process substitutions and here-documents.
//! Constructs that are not checked (control flow, function definitions) are named, so the
//! classifier fails closed on them.

use tree_sitter::{Node, Parser};

/// A word as the shell would see it after quote removal, when that is known without running
/// anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Word {
    /// Known text.
    Lit(String),
    /// Depends on an expansion or substitution; the raw text.
    Dyn(String),
}

impl Word {
    /// The text: the literal, or the raw source of a dynamic word.
    pub fn text(&self) -> &str {
        match self {
            Self::Lit(text) | Self::Dyn(text) => text,
        }
    }

    /// The literal, when known.
    pub fn lit(&self) -> Option<&str> {
        match self {
            Self::Lit(text) => Some(text),
            Self::Dyn(_) => None,
        }
    }
}

/// A redirection of one command.
#[derive(Clone, Debug)]
pub(super) struct Redirect {
    /// `>`, `>>`, `&>`, `>|`, `<`, `>&`, `<<`, `<<<`, ...
    pub op: String,
    /// Where to.
    pub target: Word,
}

/// One simple command.
#[derive(Clone, Debug, Default)]
pub(super) struct Simple {
    /// `NAME=value` before the command (or alone).
    pub assignments: Vec<(String, Word)>,
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// Its redirections.
    pub redirects: Vec<Redirect>,
    /// The index of the pipeline it belongs to, and its place in it.
    pub pipeline: (usize, usize),
    /// It runs in the background (`&`).
    pub background: bool,
}

/// Every simple command of a line, and what was not checked.
#[derive(Debug, Default)]
pub(super) struct Script {
    pub commands: Vec<Simple>,
    /// Shell constructs that are not checked (`if_statement`, `function_definition`, ...).
    pub unchecked: Vec<String>,
    /// Functions defined, with the names their bodies call, and whether a body runs
    /// something in the background or a pipeline.
    pub functions: Vec<Function>,
}

/// A function definition.
#[derive(Debug)]
pub(super) struct Function {
    pub name: String,
    pub calls: Vec<String>,
    pub forks: bool,
}

/// Parses `line`; `None` when it is not valid shell.
pub(super) fn parse(line: &str) -> Option<Script> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
    let tree = parser.parse(line, None)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut walk = Walk { src: line.as_bytes(), script: Script::default(), pipelines: 0 };
    walk.visit(root, (0, 0));
    Some(walk.script)
}

struct Walk<'a> {
    src: &'a [u8],
    script: Script,
    pipelines: usize,
}

impl Walk<'_> {
    fn text(&self, node: Node<'_>) -> String {
        node.utf8_text(self.src).unwrap_or_default().to_owned()
    }

    fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor).collect()
    }

    fn visit(&mut self, node: Node<'_>, pipeline: (usize, usize)) {
        match node.kind() {
            "program"
            | "list"
            | "subshell"
            | "compound_statement"
            | "negated_command"
            | "command_substitution"
            | "process_substitution"
            | "heredoc_body"
            | "string"
            | "concatenation"
            | "expansion"
            | "comment"
            | "heredoc_start"
            | "heredoc_end"
            | "heredoc_content"
            | "string_content"
            | "word"
            | "raw_string"
            | "number"
            | "simple_expansion"
            | "variable_name"
            | "special_variable_name"
            | "ansi_c_string"
            | "command_name"
            | "file_descriptor" => self.visit_children(node, pipeline),
            "pipeline" => {
                self.pipelines += 1;
                let id = self.pipelines;
                for (place, child) in Self::children(node).into_iter().enumerate() {
                    self.visit(child, (id, place));
                }
            }
            "redirected_statement" => self.redirected(node, pipeline),
            "command" => self.command(node, pipeline, Vec::new()),
            "variable_assignment" => {
                let assignment = self.assignment(node);
                self.script.commands.push(Simple { assignments: vec![assignment], pipeline, ..Simple::default() });
                self.visit_children(node, pipeline);
            }
            "declaration_command" | "unset_command" => {
                let mut simple = Simple { pipeline, ..Simple::default() };
                for child in Self::children(node) {
                    match child.kind() {
                        "variable_assignment" => simple.assignments.push(self.assignment(child)),
                        _ => simple.words.push(self.word(child)),
                    }
                }
                // The keyword itself (`export`) is not a named child.
                let keyword = self.text(node).split_whitespace().next().unwrap_or_default().to_owned();
                simple.words.insert(0, Word::Lit(keyword));
                self.script.commands.push(simple);
                self.visit_children(node, pipeline);
            }
            "function_definition" => {
                let name = node.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
                let before = self.script.commands.len();
                self.script.unchecked.push("a function definition".to_owned());
                self.visit_children(node, pipeline);
                let body = &self.script.commands[before..];
                let calls = body.iter().filter_map(|c| c.words.first().map(|w| w.text().to_owned())).collect();
                let text = node.child_by_field_name("body").map(|b| self.text(b)).unwrap_or_default();
                let forks = body.iter().any(|c| c.background || c.pipeline.0 != 0) || text.contains('&');
                self.script.functions.push(Function { name, calls, forks });
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.visit_children(node, pipeline),
            other => {
                self.script.unchecked.push(other.replace('_', " "));
                self.visit_children(node, pipeline);
            }
        }
        // `cmd &` is a list item followed by `&`.
        if node.kind() == "command"
            && node.next_sibling().is_some_and(|s| s.kind() == "&")
            && let Some(last) = self.script.commands.last_mut()
        {
            last.background = true;
        }
    }

    fn visit_children(&mut self, node: Node<'_>, pipeline: (usize, usize)) {
        for child in Self::children(node) {
            self.visit(child, pipeline);
        }
    }

    fn redirected(&mut self, node: Node<'_>, pipeline: (usize, usize)) {
        let mut redirects = Vec::new();
        let mut body = None;
        for child in Self::children(node) {
            match child.kind() {
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    redirects.push(self.redirect(child));
                    self.visit_children(child, pipeline);
                }
                _ => body = Some(child),
            }
        }
        match body {
            Some(body) if body.kind() == "command" => self.command(body, pipeline, redirects),
            Some(body) => {
                let before = self.script.commands.len();
                self.visit(body, pipeline);
                // Redirections of a compound statement apply to every command in it.
                for command in &mut self.script.commands[before..] {
                    command.redirects.extend(redirects.iter().cloned());
                }
                if self.script.commands.len() == before {
                    self.script.commands.push(Simple { redirects, pipeline, ..Simple::default() });
                }
            }
            None => self.script.commands.push(Simple { redirects, pipeline, ..Simple::default() }),
        }
    }

    fn command(&mut self, node: Node<'_>, pipeline: (usize, usize), redirects: Vec<Redirect>) {
        let mut simple = Simple { redirects, pipeline, ..Simple::default() };
        for child in Self::children(node) {
            match child.kind() {
                "variable_assignment" => simple.assignments.push(self.assignment(child)),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    simple.redirects.push(self.redirect(child))
                }
                "command_name" => {
                    let inner = Self::children(child);
                    simple.words.push(inner.first().map_or_else(|| Word::Lit(self.text(child)), |n| self.word(*n)));
                }
                _ => simple.words.push(self.word(child)),
            }
        }
        self.script.commands.push(simple);
        // Substitutions inside the words run too.
        self.visit_children(node, pipeline);
    }

    fn assignment(&self, node: Node<'_>) -> (String, Word) {
        let name = node.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
        let value = node.child_by_field_name("value").map_or(Word::Lit(String::new()), |v| self.word(v));
        (name, value)
    }

    fn redirect(&self, node: Node<'_>) -> Redirect {
        let mut cursor = node.walk();
        let op = node
            .children(&mut cursor)
            .find(|c| !c.is_named() || c.kind() == "file_descriptor")
            .filter(|c| !c.is_named())
            .map(|c| self.text(c))
            .unwrap_or_else(|| {
                let text = self.text(node);
                text.trim_start_matches(|c: char| c.is_ascii_digit())
                    .chars()
                    .take_while(|c| "<>&|".contains(*c))
                    .collect()
            });
        // A here-string (`<<< "$(…)"`) has no destination field: its word is the last child.
        let target = node
            .child_by_field_name("destination")
            .or_else(|| Self::children(node).into_iter().rev().find(|c| c.kind() != "file_descriptor"))
            .map(|d| self.word(d))
            .unwrap_or_else(|| Word::Lit(String::new()));
        Redirect { op, target }
    }

    /// What the shell makes of a word node, when known.
    fn word(&self, node: Node<'_>) -> Word {
        let text = self.text(node);
        match node.kind() {
            // A glob or brace expansion at the start of a word expands to names that may
            // begin with `-` (a file named `-o` makes `sort *` write): not known until it runs.
            "word" if expands_at_start(&text, &text) => Word::Dyn(text),
            "word" | "number" => Word::Lit(unescape(&text)),
            "raw_string" => Word::Lit(text.trim_start_matches('\'').trim_end_matches('\'').to_owned()),
            "string" => {
                let parts = Self::children(node);
                if parts.iter().all(|p| p.kind() == "string_content") {
                    Word::Lit(
                        parts
                            .iter()
                            .map(|p| self.text(*p))
                            .collect::<String>()
                            .replace("\\\"", "\"")
                            .replace("\\\\", "\\"),
                    )
                } else {
                    Word::Dyn(text)
                }
            }
            "concatenation" => {
                let children = Self::children(node);
                if children
                    .first()
                    .is_some_and(|first| first.kind() == "word" && expands_at_start(&self.text(*first), &text))
                {
                    return Word::Dyn(text);
                }
                let parts: Vec<Word> = children.into_iter().map(|p| self.word(p)).collect();
                if parts.iter().all(|p| p.lit().is_some()) {
                    Word::Lit(parts.iter().map(Word::text).collect())
                } else {
                    Word::Dyn(text)
                }
            }
            _ => Word::Dyn(text),
        }
    }
}

/// Whether a word whose unquoted start is `first` (all of it: `whole`) begins with a glob or a
/// brace expansion.
fn expands_at_start(first: &str, whole: &str) -> bool {
    first.starts_with(['*', '?'])
        || (first.starts_with('[') && whole.len() > 1 && whole.contains(']'))
        || (first.starts_with('{') && (whole.contains(',') || whole.contains("..")))
}

/// Removes backslash escapes from an unquoted word.
fn unescape(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}
