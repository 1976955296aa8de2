//! Words of identifiers and paths: `parseHTTPRequest`, `parse_http_request` and
//! `parse-http-request.rs` all say "parse http request".

/// The words of `text`: split at anything that is not a letter or digit, and inside a word at
/// each lowercase-to-uppercase step and before the last capital of a run followed by a
/// lowercase letter (`HTTPRequest` → `HTTP`, `Request`). Cased as written.
pub fn split(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    each_word(text, |word| out.push(word));
    out
}

/// Calls `f` with each word of `text`, as [`split`] gives them, without collecting them.
pub fn each_word<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    for part in text.split(|c: char| !c.is_alphanumeric()) {
        if part.is_empty() {
            continue;
        }
        let mut start = 0;
        let mut chars = part.char_indices().peekable();
        let mut prev: Option<char> = None;
        while let Some((at, c)) = chars.next() {
            if let Some(prev) = prev {
                let next_lower = chars.peek().is_some_and(|(_, n)| n.is_lowercase());
                let boundary = ((prev.is_lowercase() || prev.is_ascii_digit()) && c.is_uppercase())
                    || (prev.is_uppercase() && c.is_uppercase() && next_lower);
                if boundary {
                    f(&part[start..at]);
                    start = at;
                }
            }
            prev = Some(c);
        }
        f(&part[start..]);
    }
}

/// [`split`], joined by spaces and lowercased: what a ranking document holds for `text`.
pub fn spaced(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for word in split(text) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The compound identifiers of `text`, lowercased: each run of letters, digits, `_` and `-`
/// (trimmed of `_` and `-`) that [`split`] makes more than one word of (`parse_http_request`,
/// `parseHTTPRequest`, `tool-fs`). A whole name said in a query matches the files that say it
/// better than its words apart do.
pub fn compounds(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|run| run.trim_matches(|c| c == '_' || c == '-'))
        .filter(|run| run.len() >= 4 && split(run).len() > 1)
        .map(str::to_lowercase)
}

/// A compound identifier as it is matched: lowercase, without `_` and `-` (`parse_http_request`,
/// `parseHTTPRequest` and `parse-http-request` are all `parsehttprequest`).
pub fn joined(ident: &str) -> String {
    ident.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// The identifiers a query may name, [`joined`]: its compound identifiers, and each run of two
/// or three adjacent words ("token meter" may be `tokenMeter`, `token_meter`).
pub fn query_idents(query: &str) -> Vec<String> {
    let mut out: Vec<String> = compounds(query).map(|c| joined(&c)).collect();
    for clause in query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == ' ' || c == '\'')) {
        let words: Vec<String> = split(clause).into_iter().map(str::to_lowercase).collect();
        for n in 2..=3 {
            for run in words.windows(n) {
                let ident: String = run.concat();
                if ident.len() >= 6 && !out.contains(&ident) {
                    out.push(ident);
                }
            }
        }
    }
    out
}

/// What a commit subject or task says it is about before its colon: the scope of
/// `fix(parser): …` or the prefix of `net/http: …`, `VS Code: …` (at most three words, no
/// sentence); `None` when there is none or the head only says what kind of change it is
/// (`fix: …`).
pub fn scope(query: &str) -> Option<&str> {
    let (head, rest) = query.split_once(": ")?;
    if rest.trim().is_empty() || head.len() > 40 {
        return None;
    }
    let head = match head.split_once('(') {
        Some((_, inner)) => inner.trim_end_matches('!').strip_suffix(')')?,
        None => head,
    };
    let head = head.trim();
    let plain = head.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '/' | '_' | '-' | ',' | '*'));
    let kind_only = CHANGE_KINDS.contains(&head.to_lowercase().as_str());
    (plain && !kind_only && !head.is_empty() && head.split_whitespace().count() <= 3).then_some(head)
}

/// The parts of a query's [`scope`], lowercase: `cp,mv,install: …` is about `cp`, `mv` and
/// `install`; `VS Code: …` about `vs code`.
pub fn scopes(query: &str) -> Vec<String> {
    let Some(scope) = scope(query) else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for part in scope.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let part = part.to_lowercase();
        if !out.contains(&part) {
            out.push(part);
        }
    }
    out
}

/// Heads that say what kind of change a commit is, not where (`fix: …`, `feat: …`).
const CHANGE_KINDS: &[&str] = &[
    "fix", "fixes", "feat", "feature", "chore", "refactor", "style", "perf", "revert", "wip", "release", "bump",
    "merge",
];

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn identifiers_split_into_their_words() {
        assert_eq!(split("parseHTTPRequest"), ["parse", "HTTP", "Request"]);
        assert_eq!(split("parse_http_request"), ["parse", "http", "request"]);
        assert_eq!(split("server/tool-fs/src/lib.rs"), ["server", "tool", "fs", "src", "lib", "rs"]);
        assert_eq!(split("BufferCache::record_read"), ["Buffer", "Cache", "record", "read"]);
        assert_eq!(split("utf8ToUtf16"), ["utf8", "To", "Utf16"]);
        assert_eq!(spaced("MAX_FILE_BYTES"), "max file bytes");
    }

    #[test]
    fn a_scope_splits_into_its_parts() {
        assert_eq!(scopes("cp,mv,install: avoid excess stat calls"), ["cp", "mv", "install"]);
        assert_eq!(scopes("fix(Parser): empty input"), ["parser"]);
        assert_eq!(scopes("VS Code: a drop on the panel"), ["vs code"]);
        assert_eq!(scopes("net/http: close idle connections"), ["net/http"]);
        assert!(scopes("fix: a typo").is_empty());
        assert!(scopes("Fix a crash in the parser: when the input is empty").is_empty());
    }

    #[test]
    fn compounds_are_whole_names_of_several_words() {
        let found: Vec<String> =
            compounds("Fix `parse_http_request` in tool-fs: McpStdio, __init__ and read").collect();
        assert_eq!(found, ["parse_http_request", "tool-fs", "mcpstdio"]);
        let found: Vec<String> = compounds(":TandemCheckpoints, tandem_llm::text_of").collect();
        assert_eq!(found, ["tandemcheckpoints", "tandem_llm", "text_of"]);
    }

    #[test]
    fn a_scope_is_the_short_head_before_a_colon() {
        assert_eq!(scope("fix(parser): handle empty input"), Some("parser"));
        assert_eq!(scope("feat(api)!: drop v1"), Some("api"));
        assert_eq!(scope("net/http: close idle connections"), Some("net/http"));
        assert_eq!(scope("VS Code e2e: the panel"), Some("VS Code e2e"));
        assert_eq!(scope("Fix the bug where a: b is parsed"), None);
        assert_eq!(scope("no colon here"), None);
        assert_eq!(scope("trailing: "), None);
        assert_eq!(scope("fix: handle empty input"), None, "a kind of change, not a place");
        assert_eq!(scope("Feat!: drop v1"), None);
    }

    #[test]
    fn a_query_names_its_compounds_and_its_adjacent_words_joined() {
        let idents = query_idents("the token meter shows McpStdio");
        for expected in ["mcpstdio", "tokenmeter", "thetoken", "metershows", "tokenmetershows", "mcpstdio"] {
            assert!(idents.contains(&expected.to_owned()), "{expected} in {idents:?}");
        }
        assert_eq!(joined("parse_HTTP-request"), "parsehttprequest");
    }

    proptest! {
        #[test]
        fn each_word_gives_the_words_of_split(text in "[a-zA-Zé0-9_ ./-]{0,40}") {
            let mut words = Vec::new();
            each_word(&text, |w| words.push(w));
            prop_assert_eq!(words, split(&text));
        }

        #[test]
        fn words_are_pieces_of_the_text_in_order(text in "[a-zA-Z0-9_ ./-]{0,40}") {
            let words = split(&text);
            let letters: String = text.chars().filter(|c| c.is_alphanumeric()).collect();
            prop_assert_eq!(words.concat(), letters);
            prop_assert!(words.iter().all(|w| !w.is_empty()));
        }
    }
}
