//! A file's outline: its definitions (from the tags query) and the names it uses (every
//! identifier-like leaf of the syntax tree that is not a definition's own name), with the words
//! of its comments.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator as _};

use crate::lang::Lang;

/// Longest signature line kept, in chars.
const MAX_SIGNATURE_CHARS: usize = 160;
/// Comment text kept per file, in bytes.
const MAX_COMMENT_BYTES: usize = 2_000;
/// Longest name kept as a reference (longer "identifiers" are generated data).
const MAX_NAME_LEN: usize = 80;

/// What a definition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// A free function.
    Function,
    /// A function inside a class, impl, trait or interface.
    Method,
    /// A class, struct, enum or union.
    Class,
    /// A trait or interface.
    Interface,
    /// A type alias or other named type.
    Type,
    /// A constant (or a top-level variable where the language has no constants).
    Constant,
    /// A module or namespace.
    Module,
    /// A macro.
    Macro,
    /// A Rust `impl` block, named by its type.
    Impl,
}

/// One definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Def {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: Kind,
    /// The language's word for it (`fn`, `struct`, `class`, `def`, `interface`, ...).
    pub keyword: String,
    /// The line its name is on (0-based).
    pub line: u32,
    /// That line, trimmed at the end (and cut when very long).
    pub signature: String,
    /// The definition this one is inside (index into the outline's definitions).
    pub parent: Option<u32>,
}

/// A file's outline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outline {
    /// Definitions, in the file's order.
    pub defs: Vec<Def>,
    /// Names the file uses, each with how often, sorted by name.
    pub refs: Vec<(String, u32)>,
    /// The text of its comments (the first ones, up to a cap).
    pub comments: String,
    /// Every word of the text (identifiers split, comments, strings), lowercase, with how often
    /// it occurs (at most [`MAX_WORDS`] distinct words, the most frequent), sorted by word.
    pub words: Vec<(String, u32)>,
    /// The compound identifiers of the text ([`compounds`](crate::words::compounds),
    /// [`joined`](crate::words::joined)), with how often each occurs (at most [`MAX_WORDS`], the most frequent), sorted.
    pub idents: Vec<(String, u32)>,
}

/// Distinct words kept per file.
pub const MAX_WORDS: usize = 3_000;

/// Words with how often each occurs.
type Counts = Vec<(String, u32)>;

/// The words of `text` ([`Outline::words`]) and its compound identifiers ([`Outline::idents`]),
/// with their counts, in one pass (each distinct word allocated once).
fn text_counts(text: &str) -> (Counts, Counts) {
    fn count(counts: &mut HashMap<String, u32>, key: &str) {
        match counts.get_mut(key) {
            Some(n) => *n += 1,
            None => {
                counts.insert(key.to_owned(), 1);
            }
        }
    }
    let mut words: HashMap<String, u32> = HashMap::new();
    let mut idents: HashMap<String, u32> = HashMap::new();
    let mut lower = String::new();
    for run in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')) {
        if run.is_empty() {
            continue;
        }
        let mut parts = 0;
        crate::words::each_word(run, |word| {
            parts += 1;
            if word.len() < 2 || word.len() > 40 || word.bytes().all(|b| b.is_ascii_digit()) {
                return;
            }
            lower.clear();
            lower.extend(word.chars().flat_map(char::to_lowercase));
            count(&mut words, &lower);
        });
        // A compound identifier (as `words::compounds` finds them), joined.
        let trimmed = run.trim_matches(|c| c == '_' || c == '-');
        if parts > 1 && trimmed.len() >= 4 && trimmed.len() <= MAX_NAME_LEN {
            lower.clear();
            lower.extend(trimmed.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase));
            count(&mut idents, &lower);
        }
    }
    (most_frequent(words), most_frequent(idents))
}

/// At most [`MAX_WORDS`] of `counts`, the most frequent, sorted.
fn most_frequent(counts: HashMap<String, u32>) -> Vec<(String, u32)> {
    let mut words: Vec<(String, u32)> = counts.into_iter().collect();
    if words.len() > MAX_WORDS {
        words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        words.truncate(MAX_WORDS);
    }
    words.sort();
    words
}

impl Outline {
    /// The definitions not inside another one (methods and nested items left out).
    pub fn top_level(&self) -> impl Iterator<Item = &Def> {
        self.defs.iter().filter(|d| d.parent.is_none())
    }
}

/// The outline of `text`, a file of `lang`.
pub fn outline(lang: Lang, text: &str) -> Outline {
    thread_local! {
        /// One parser per thread, reused from file to file.
        static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(Parser::new());
    }
    let tree = PARSER.with_borrow_mut(|parser| {
        parser.set_language(&lang.grammar()).ok()?;
        parser.parse(text, None)
    });
    let Some(tree) = tree else { return Outline::default() };
    let Some(query) = lang.query() else { return Outline::default() };
    let names = query.capture_names();
    let bytes = text.as_bytes();
    let lines: Vec<&str> = text.lines().collect();

    // name node's start byte -> (pattern index, definition node's byte range, def)
    let mut by_name: HashMap<usize, (usize, std::ops::Range<usize>, Def)> = HashMap::new();
    let mut cursor = QueryCursor::new();
    cursor.set_match_limit(4096);
    let mut matches = cursor.matches(query, tree.root_node(), bytes);
    while let Some(m) = matches.next() {
        let mut name: Option<Node> = None;
        let mut def: Option<(Node, Kind)> = None;
        for capture in m.captures() {
            let capture_name = names.get(capture.index as usize).copied().unwrap_or_default();
            if capture_name == "name" {
                name = Some(capture.node);
            } else if let Some(kind) = capture_name.strip_prefix("definition.").and_then(kind_of) {
                def = Some((capture.node, kind));
            }
        }
        let (Some(name), Some((node, kind))) = (name, def) else { continue };
        // Where two patterns tag one name, the first pattern wins (ours come first).
        if by_name.get(&name.start_byte()).is_some_and(|(pattern, _, _)| *pattern <= m.pattern_index) {
            continue;
        }
        let Ok(text_of_name) = name.utf8_text(bytes) else { continue };
        if text_of_name.is_empty() {
            continue;
        }
        let row = name.start_position().row;
        let signature = lines.get(row).map(|l| cut(l.trim_end())).unwrap_or_default();
        let def = Def {
            name: text_of_name.to_owned(),
            kind,
            keyword: node.kind().to_owned(),
            line: u32::try_from(row).unwrap_or(u32::MAX),
            signature,
            parent: None,
        };
        by_name.insert(name.start_byte(), (m.pattern_index, node.byte_range(), def));
    }
    let name_nodes: std::collections::HashSet<usize> = by_name.keys().copied().collect();
    let mut found: Vec<(std::ops::Range<usize>, Def)> = by_name.into_values().map(|(_, r, d)| (r, d)).collect();
    // Parents: the innermost definition whose node holds this one's.
    found.sort_by(|a, b| a.0.start.cmp(&b.0.start).then(b.0.end.cmp(&a.0.end)).then(a.1.line.cmp(&b.1.line)));
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (end byte, index)
    let mut defs = Vec::with_capacity(found.len());
    for (index, (range, mut def)) in found.into_iter().enumerate() {
        while stack.last().is_some_and(|&(end, _)| end <= range.start) {
            stack.pop();
        }
        if let Some(&(_, parent)) = stack.last() {
            def.parent = u32::try_from(parent).ok();
        }
        // A function is a method inside a class, impl, trait or interface, and only there.
        if matches!(def.kind, Kind::Function | Kind::Method) {
            let parent_kind = stack.last().and_then(|&(_, p)| defs.get(p)).map(|d: &Def| d.kind);
            let in_type = matches!(parent_kind, Some(Kind::Class | Kind::Interface | Kind::Impl));
            if in_type {
                def.kind = Kind::Method;
            } else if lang == Lang::Rust {
                // The grammar tags every function in a block of items (a `mod`'s too) a method.
                def.kind = Kind::Function;
            }
        }
        def.keyword = keyword(lang, &def.keyword, def.kind).to_owned();
        stack.push((range.end, index));
        defs.push(def);
    }

    let mut refs: HashMap<&str, u32> = HashMap::new();
    let mut comments = String::new();
    let mut walk = tree.walk();
    'walk: loop {
        let node = walk.node();
        let kind = node.kind();
        let mut descend = true;
        if kind.contains("comment") {
            descend = false;
            if comments.len() < MAX_COMMENT_BYTES
                && let Ok(t) = node.utf8_text(bytes)
            {
                let room = MAX_COMMENT_BYTES - comments.len();
                let mut end = t.len().min(room);
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                comments.push_str(&t[..end]);
                comments.push('\n');
            }
        } else if node.child_count() == 0
            && is_name_kind(kind)
            && !name_nodes.contains(&node.start_byte())
            && let Ok(t) = node.utf8_text(bytes)
            && !t.is_empty()
            && t.len() <= MAX_NAME_LEN
        {
            *refs.entry(t).or_default() += 1;
        }
        if descend && walk.goto_first_child() {
            continue;
        }
        loop {
            if walk.goto_next_sibling() {
                continue 'walk;
            }
            if !walk.goto_parent() {
                break 'walk;
            }
        }
    }
    let mut refs: Vec<(String, u32)> = refs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    refs.sort();
    let (words, idents) = text_counts(text);
    Outline { defs, refs, comments, words, idents }
}

fn is_name_kind(kind: &str) -> bool {
    kind.ends_with("identifier") || kind == "constant"
}

fn kind_of(tag: &str) -> Option<Kind> {
    Some(match tag {
        "function" => Kind::Function,
        "method" => Kind::Method,
        "class" => Kind::Class,
        "interface" => Kind::Interface,
        "type" => Kind::Type,
        "constant" => Kind::Constant,
        "module" => Kind::Module,
        "macro" => Kind::Macro,
        "impl" => Kind::Impl,
        _ => return None,
    })
}

/// The word the language uses for a definition node.
fn keyword(lang: Lang, node_kind: &str, kind: Kind) -> &'static str {
    let by_node = match node_kind {
        "struct_item" | "struct_specifier" => "struct",
        "enum_item" | "enum_specifier" | "enum_declaration" => "enum",
        "union_item" | "union_specifier" => "union",
        "type_item" | "type_alias_declaration" | "type_definition" | "type_spec" | "alias_declaration" => "type",
        "trait_item" => "trait",
        "mod_item" => "mod",
        "macro_definition" => "macro_rules",
        "const_item" => "const",
        "static_item" => "static",
        "impl_item" => "impl",
        "class_specifier" => "class",
        "namespace_definition" | "internal_module" => "namespace",
        "preproc_def" | "preproc_function_def" => "#define",
        "record_declaration" => "record",
        "interface_declaration" => "interface",
        "module" if lang == Lang::Ruby => "module",
        _ => "",
    };
    if !by_node.is_empty() {
        return by_node;
    }
    match (lang, kind) {
        (Lang::Rust, Kind::Function | Kind::Method) => "fn",
        (Lang::Python | Lang::Ruby, Kind::Function | Kind::Method) => "def",
        (Lang::Go, Kind::Function | Kind::Method) => "func",
        (Lang::Go, Kind::Constant) => "const",
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, Kind::Function) => "function",
        (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, Kind::Constant) => "const",
        (_, Kind::Function) => "function",
        (_, Kind::Method) => "method",
        (_, Kind::Class) => "class",
        (_, Kind::Interface) => "interface",
        (_, Kind::Type) => "type",
        (_, Kind::Constant) => "const",
        (_, Kind::Module) => "module",
        (_, Kind::Macro) => "macro",
        (_, Kind::Impl) => "impl",
    }
}

fn cut(line: &str) -> String {
    if line.chars().count() <= MAX_SIGNATURE_CHARS {
        return line.to_owned();
    }
    let mut out: String = line.chars().take(MAX_SIGNATURE_CHARS).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests;
