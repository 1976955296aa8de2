//! How relevant each tool is to a query: BM25 (English stemming and stop words, so "reading
//! files" finds `read_text_file`) over one document per tool, built the same way wherever tools
//! are ranked — the MCP client's ranking (`tandem-mcp`) and `tool_search` — so one query orders
//! the same tools the same way in both.
//!
//! A tool's document is its names (the name and its aliases, twice, since names say more than
//! prose; `snake_case` and `kebab-case` split into words), its keywords and its description:
//! [`document`]. [`scores`] gives every document's score; [`top`] the best ones, ties in the
//! documents' order. [`Index`] keeps the documents' statistics for many queries (the repository
//! map ranks files by it), and [`terms`] gives the words a text is matched by (lowercase, stop
//! words out, stemmed), so callers can compare words the way the ranking does.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

use bm25::{DefaultTokenizer, Embedder, EmbedderBuilder, Language, Scorer, Tokenizer};

/// The text a tool is ranked by.
pub fn document(name: &str, aliases: &[&str], keywords: &[&str], description: &str) -> String {
    let names: Vec<String> =
        std::iter::once(name).chain(aliases.iter().copied()).map(|n| n.replace(['_', '-'], " ")).collect();
    format!("{0} {0} {1} {2}", names.join(" "), keywords.join(" "), description)
}

/// The BM25 score of every document for `query`, in the documents' order (0 for those that do
/// not match, and for all when the query has no words).
pub fn scores(documents: &[String], query: &str) -> Vec<f64> {
    if documents.is_empty() || query.trim().is_empty() {
        return vec![0.0; documents.len()];
    }
    Index::new(documents).scores(query)
}

/// The English tokenizer, remembering each whitespace-separated word's tokens: a large corpus
/// repeats few distinct words, and the tokens of a text are those of its words in order
/// (whitespace always separates words), so the result is the plain tokenizer's.
struct Remembering {
    inner: DefaultTokenizer,
    known: Mutex<HashMap<String, Vec<String>>>,
}

impl Tokenizer for Remembering {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::new();
        for word in input_text.split_whitespace() {
            match known.get(word) {
                Some(tokens) => out.extend(tokens.iter().cloned()),
                None => {
                    let tokens = self.inner.tokenize(word);
                    out.extend(tokens.iter().cloned());
                    known.insert(word.to_owned(), tokens);
                }
            }
        }
        out
    }
}

/// The BM25 statistics of a set of documents, for scoring many queries against them.
pub struct Index {
    embedder: Embedder<u32, Remembering>,
    scorer: Scorer<usize>,
    len: usize,
}

impl Index {
    /// The index of `documents`.
    pub fn new<S: AsRef<str>>(documents: &[S]) -> Self {
        let corpus: Vec<&str> = documents.iter().map(AsRef::as_ref).collect();
        let tokenizer = Remembering { inner: DefaultTokenizer::new(Language::English), known: Mutex::default() };
        let embedder =
            EmbedderBuilder::<u32, Remembering>::with_tokenizer_and_fit_to_corpus(tokenizer, &corpus).build();
        let mut scorer = Scorer::new();
        for (i, document) in corpus.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(document));
        }
        Self { embedder, scorer, len: documents.len() }
    }

    /// The BM25 score of every document for `query`, in the documents' order (0 for those that
    /// do not match, and for all when the query has no words).
    pub fn scores(&self, query: &str) -> Vec<f64> {
        let mut out = vec![0.0; self.len];
        if query.trim().is_empty() {
            return out;
        }
        for hit in self.scorer.matches(&self.embedder.embed(query)) {
            if let Some(score) = out.get_mut(hit.id) {
                *score = f64::from(hit.score);
            }
        }
        out
    }
}

/// The words `text` is matched by: lowercase, stop words left out, stemmed (English).
pub fn terms(text: &str) -> Vec<String> {
    static TOKENIZER: LazyLock<DefaultTokenizer> = LazyLock::new(|| DefaultTokenizer::new(Language::English));
    TOKENIZER.tokenize(text)
}

/// The indices of the `limit` best-matching documents, best first; equal scores keep the
/// documents' order; documents that do not match are left out.
pub fn top(documents: &[String], query: &str, limit: usize) -> Vec<usize> {
    let scores = scores(documents, query);
    let mut order: Vec<usize> = (0..documents.len()).filter(|&i| scores[i] > 0.0).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order.truncate(limit);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs_tools() -> Vec<String> {
        vec![
            document("mcp__fs__list_directory", &[], &[], "List the entries of a directory."),
            document("mcp__fs__write_file", &[], &[], "Create a new file or overwrite an existing file."),
            document("mcp__fs__read_text_file", &[], &[], "Read the complete contents of a file as text."),
        ]
    }

    #[test]
    fn reading_files_finds_the_tool_that_reads_files_first() {
        assert_eq!(top(&fs_tools(), "reading files", 3).first(), Some(&2));
    }

    #[test]
    fn names_are_split_into_words_and_count_twice() {
        let doc = document("read_text_file", &["cat"], &["show"], "Reads.");
        assert_eq!(doc, "read text file cat read text file cat show Reads.");
    }

    #[test]
    fn remembered_words_tokenize_as_the_plain_tokenizer_does() {
        let plain = DefaultTokenizer::new(Language::English);
        let remembering = Remembering { inner: DefaultTokenizer::new(Language::English), known: Mutex::default() };
        for text in ["Reading the files, reading\tthe FILES", "naïve café  résumé", "a_b c-d e.f", ""] {
            assert_eq!(remembering.tokenize(text), plain.tokenize(text), "{text}");
            assert_eq!(remembering.tokenize(text), plain.tokenize(text), "{text} again");
        }
    }

    #[test]
    fn an_index_scores_like_a_one_off_ranking() {
        let docs = fs_tools();
        let index = Index::new(&docs);
        for query in ["reading files", "write", "directory entries", ""] {
            assert_eq!(index.scores(query), scores(&docs, query), "{query}");
        }
        assert_eq!(terms("Reading the files"), ["read", "file"]);
    }

    #[test]
    fn no_words_no_scores_and_ties_keep_their_order() {
        assert_eq!(scores(&fs_tools(), "  "), vec![0.0; 3]);
        let same = vec![document("a", &[], &[], "fetch"), document("b", &[], &[], "fetch")];
        assert_eq!(top(&same, "fetch", 5), vec![0, 1]);
        assert!(top(&fs_tools(), "zebra", 5).is_empty());
    }
}
