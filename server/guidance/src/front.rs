//! Front matter: the `---` block at the top of a rule, command or skill file, in the subset of
//! YAML those files use: `key: value` (plain, `"double"` or `'single'` quoted), flow lists
//! (`key: ["a", b]`) and block lists (`key:` then `  - a` lines), `#` comments. Anything else is
//! an error naming the line, never a silent skip.

use std::fmt;

/// A value of the front matter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A scalar, unquoted.
    Text(String),
    /// A list of scalars.
    List(Vec<String>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text(text) => f.write_str(text),
            Self::List(items) => write!(f, "[{}]", items.join(", ")),
        }
    }
}

/// The front matter of a file and where its body starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// The keys in file order, each with its value and 1-based line.
    pub entries: Vec<(String, Value, usize)>,
    /// The text after the front matter (the whole text when there is none).
    pub body: String,
}

impl FrontMatter {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _, _)| k == key).map(|(_, value, _)| value)
    }

    /// The value of `key` as text (a list is an error naming the line).
    pub fn text(&self, key: &str) -> Result<Option<&str>, Malformed> {
        match self.entries.iter().find(|(k, _, _)| k == key) {
            None => Ok(None),
            Some((_, Value::Text(text), _)) => Ok(Some(text)),
            Some((_, Value::List(_), line)) => {
                Err(Malformed::new(*line, format!("`{key}` takes one value, not a list")))
            }
        }
    }

    /// The value of `key` as a list (one scalar counts as a list of one).
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        match self.get(key)? {
            Value::Text(text) if text.is_empty() => Some(Vec::new()),
            Value::Text(text) => Some(vec![text.clone()]),
            Value::List(items) => Some(items.clone()),
        }
    }

    /// The keys not in `known`, with their lines.
    pub fn unknown<'a>(&'a self, known: &'a [&str]) -> impl Iterator<Item = (&'a str, usize)> + 'a {
        self.entries.iter().filter(|(k, _, _)| !known.contains(&k.as_str())).map(|(k, _, line)| (k.as_str(), *line))
    }
}

/// Why a front matter could not be read: the line (1-based) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct Malformed {
    /// The line of the file.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}

impl Malformed {
    pub(crate) fn new(line: usize, message: impl Into<String>) -> Self {
        Self { line, message: message.into() }
    }
}

/// Splits `text` into its front matter and body. A file that does not start with a `---` line
/// has no front matter; one that starts with it must close it.
pub fn parse(text: &str) -> Result<FrontMatter, Malformed> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else { return Ok(FrontMatter::default()) };
    if first.trim_end() != "---" {
        return Ok(FrontMatter { entries: Vec::new(), body: text.to_owned() });
    }
    let mut entries: Vec<(String, Value, usize)> = Vec::new();
    let mut consumed = first.len();
    // The key whose block list is being read (`key:` with nothing after it).
    let mut open: Option<usize> = None;
    for (index, raw) in lines.enumerate() {
        let number = index + 2;
        consumed += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" {
            return Ok(FrontMatter { entries, body: text[consumed..].to_owned() });
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("- ").or_else(|| (trimmed == "-").then_some("")) {
            let Some(at) = open else {
                return Err(Malformed::new(number, "a list item without a key above it"));
            };
            if !line.starts_with([' ', '\t', '-']) {
                return Err(Malformed::new(number, "a list item must be indented under its key"));
            }
            let item = scalar(item, number)?;
            if let Some((_, Value::List(items), _)) = entries.get_mut(at) {
                items.push(item);
            }
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return Err(Malformed::new(number, format!("unexpected indented line `{trimmed}`")));
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err(Malformed::new(number, format!("expected `key: value`, found `{trimmed}`")));
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(Malformed::new(number, format!("`{key}` is not a key (letters, digits, `-` and `_`)")));
        }
        if entries.iter().any(|(k, _, _)| k == key) {
            return Err(Malformed::new(number, format!("`{key}` appears twice")));
        }
        let rest = rest.trim();
        open = None;
        let value = if rest.is_empty() {
            open = Some(entries.len());
            Value::List(Vec::new())
        } else if let Some(inner) = rest.strip_prefix('[') {
            let Some(inner) = inner.strip_suffix(']') else {
                return Err(Malformed::new(number, format!("the list of `{key}` is not closed with `]`")));
            };
            Value::List(flow_items(inner, number)?)
        } else {
            Value::Text(scalar(rest, number)?)
        };
        entries.push((key.to_owned(), value, number));
    }
    Err(Malformed::new(1, "the front matter opened with `---` is never closed by a `---` line"))
}

/// The items of a flow list (between `[` and `]`), split at commas outside quotes.
fn flow_items(inner: &str, line: usize) -> Result<Vec<String>, Malformed> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in inner.chars() {
        if escaped {
            escaped = false;
            current.push(c);
            continue;
        }
        match (quote, c) {
            (Some('"'), '\\') => {
                escaped = true;
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                current.push(c);
            }
            (None, ',') => items.push(scalar(std::mem::take(&mut current).trim(), line)?),
            (None, '[' | ']' | '{' | '}') => {
                return Err(Malformed::new(line, format!("nested `{c}` in a list: list each item as a string")));
            }
            (None, c) => current.push(c),
        }
    }
    if quote.is_some() {
        return Err(Malformed::new(line, "a quoted item is not closed"));
    }
    let last = current.trim();
    if !last.is_empty() {
        items.push(scalar(last, line)?);
    } else if !items.is_empty() {
        // `[a, b,]`: a trailing comma is allowed.
    }
    Ok(items)
}

/// A scalar: quoted (`"…"` with `\"`, `\\`, `\n`, `\t`; `'…'` with `''`) or plain (a trailing
/// ` #` comment dropped).
fn scalar(raw: &str, line: usize) -> Result<String, Malformed> {
    let raw = raw.trim();
    if let Some(inner) = raw.strip_prefix('"') {
        let Some(inner) = inner.strip_suffix('"').filter(|_| raw.len() >= 2) else {
            return Err(Malformed::new(line, format!("the string {raw} is not closed with `\"`")));
        };
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                if c == '"' {
                    return Err(Malformed::new(line, "a `\"` inside a double-quoted string must be written `\\\"`"));
                }
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(c @ ('"' | '\\' | '/')) => out.push(c),
                other => {
                    return Err(Malformed::new(
                        line,
                        format!("unknown escape `\\{}` in a double-quoted string", other.unwrap_or(' ')),
                    ));
                }
            }
        }
        return Ok(out);
    }
    if let Some(inner) = raw.strip_prefix('\'') {
        let Some(inner) = inner.strip_suffix('\'').filter(|_| raw.len() >= 2) else {
            return Err(Malformed::new(line, format!("the string {raw} is not closed with `'`")));
        };
        if inner.replace("''", "").contains('\'') {
            return Err(Malformed::new(line, "a `'` inside a single-quoted string must be written `''`"));
        }
        return Ok(inner.replace("''", "'"));
    }
    let plain = match raw.find(" #") {
        Some(at) => raw[..at].trim_end(),
        None => raw,
    };
    if plain.starts_with(['[', '{', '&', '*', '!', '|', '>', '@', '`']) {
        return Err(Malformed::new(line, format!("`{plain}` must be quoted")));
    }
    Ok(plain.to_owned())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn reads_the_forms_rule_and_command_files_use() -> Result<(), Malformed> {
        let text = "---\n# a comment\ndescription: Review a file  # why\nargument-hint: '<file> [focus]'\npaths: [\"src/**/*.rs\", 'tests/*.rs', docs/*.md]\nglobs:\n  - \"*.py\"\n  - lib/**\nmodel: \"gpt-4.1\"\n---\nBody $ARGUMENTS\n";
        let front = parse(text)?;
        assert_eq!(front.text("description")?, Some("Review a file"));
        assert_eq!(front.text("argument-hint")?, Some("<file> [focus]"));
        assert_eq!(front.list("paths"), Some(vec!["src/**/*.rs".into(), "tests/*.rs".into(), "docs/*.md".into()]));
        assert_eq!(front.list("globs"), Some(vec!["*.py".into(), "lib/**".into()]));
        assert_eq!(front.text("model")?, Some("gpt-4.1"));
        assert_eq!(front.body, "Body $ARGUMENTS\n");
        assert_eq!(front.entries.iter().map(|e| e.2).collect::<Vec<_>>(), [3, 4, 5, 6, 9]);
        Ok(())
    }

    #[test]
    fn no_front_matter_is_all_body() -> Result<(), Malformed> {
        assert_eq!(parse("# Title\n---\n")?.body, "# Title\n---\n");
        assert_eq!(parse("")?.body, "");
        Ok(())
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("---\ndescription: x\n", 1, "never closed"),
            ("---\ndescription: x\npaths: [\"a\", \"b\"\n---\n", 3, "not closed with `]`"),
            ("---\njust words\n---\n", 2, "expected `key: value`"),
            ("---\na: 1\na: 2\n---\n", 3, "twice"),
            ("---\n  - x\n---\n", 2, "without a key"),
            ("---\nd: \"open\n---\n", 2, "not closed"),
            ("---\nd: [a, [b]]\n---\n", 2, "nested"),
            ("---\nd: {a: 1}\n---\n", 2, "must be quoted"),
        ];
        for (text, line, words) in cases {
            match parse(text) {
                Err(err) => {
                    assert_eq!(err.line, line, "{text:?}: {err}");
                    assert!(err.message.contains(words), "{text:?}: {err}");
                }
                Ok(front) => panic!("{text:?} parsed as {front:?}"),
            }
        }
    }

    fn quote(item: &str) -> String {
        format!("\"{}\"", item.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").replace('\t', "\\t"))
    }

    proptest! {
        /// Any strings written as a quoted flow list and as a block list read back as they were,
        /// and the body after the front matter is kept byte for byte.
        #[test]
        fn quoted_lists_round_trip(items in proptest::collection::vec("\\PC{0,12}", 0..5), body in "\\PC{0,40}") {
            let flow = items.iter().map(|i| quote(i)).collect::<Vec<_>>().join(", ");
            let block: String = items.iter().map(|i| format!("  - {}\n", quote(i))).collect();
            let text = format!("---\npaths: [{flow}]\nglobs:\n{block}description: {}\n---\n{body}", quote("d"));
            let front = parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(front.list("paths"), Some(items.clone()));
            prop_assert_eq!(front.list("globs"), Some(items));
            prop_assert_eq!(front.body, body);
        }

        /// Whatever the text, parsing answers (no panic), and an error names a line of the file.
        #[test]
        fn never_panics(text in "(---\n)?[a-z: \\[\\]\"'#\n-]{0,80}") {
            if let Err(err) = parse(&text) {
                prop_assert!(err.line >= 1 && err.line <= text.lines().count().max(1));
            }
        }
    }
}
