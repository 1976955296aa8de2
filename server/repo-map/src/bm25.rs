//! BM25 over documents given as term counts (Okapi BM25, k1 = 1.2, b = 0.75, the idf of
//! tandem-rank's ranker): an inverted index, so building it costs one pass over each file's
//! distinct words and a query touches only the postings of its own terms.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The BM25 statistics of a set of documents.
#[derive(Debug, Default)]
pub(crate) struct Bm25 {
    /// Per term, the documents holding it with how often (or how much: see
    /// [`Builder::add_weight`]).
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Per document, its length in terms.
    lens: Vec<f32>,
    avgdl: f64,
}

impl Bm25 {
    /// The index of `documents`, each given as its terms with their counts.
    #[cfg(test)]
    pub(crate) fn new(documents: &[HashMap<String, u32>]) -> Self {
        let mut builder = Self::builder(documents.len());
        for (i, doc) in documents.iter().enumerate() {
            for (term, &count) in doc {
                builder.add(i, term, count);
            }
        }
        builder.build()
    }

    /// An index built one document at a time ([`Builder::add`]).
    pub(crate) fn builder(documents: usize) -> Builder {
        Builder { postings: HashMap::new(), lens: vec![0.0; documents] }
    }

    /// The documents that hold `term`.
    pub(crate) fn holders(&self, term: &str) -> impl Iterator<Item = u32> + '_ {
        self.postings.get(term).into_iter().flatten().map(|&(doc, _)| doc)
    }

    /// Every document's score for `terms` (a term named twice counts twice), in the documents'
    /// order.
    pub(crate) fn scores<'a>(&self, terms: impl IntoIterator<Item = &'a str>) -> Vec<f64> {
        let mut out = vec![0.0; self.lens.len()];
        let n = self.lens.len() as f64;
        for term in terms {
            let Some(list) = self.postings.get(term) else { continue };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                let len = f64::from(self.lens[doc as usize]);
                out[doc as usize] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / self.avgdl));
            }
        }
        out
    }
}

/// A [`Bm25`] in the making.
pub(crate) struct Builder {
    postings: HashMap<String, Vec<(u32, f32)>>,
    lens: Vec<f32>,
}

impl Builder {
    /// Adds `count` occurrences of `term` to document `doc` (documents in order: a document's
    /// terms all before the next document's).
    pub(crate) fn add(&mut self, doc: usize, term: &str, count: u32) {
        self.add_weight(doc, term, count as f32);
    }

    /// Adds `term` to document `doc` with `weight` occurrences, which may be fractional (an old
    /// mention weighing less than a recent one), as [`add`](Self::add) does.
    pub(crate) fn add_weight(&mut self, doc: usize, term: &str, weight: f32) {
        if weight <= 0.0 || !weight.is_finite() || doc >= self.lens.len() {
            return;
        }
        self.lens[doc] += weight;
        let doc = doc as u32;
        match self.postings.get_mut(term) {
            Some(list) => match list.last_mut() {
                Some(last) if last.0 == doc => last.1 += weight,
                _ => list.push((doc, weight)),
            },
            None => {
                self.postings.insert(term.to_owned(), vec![(doc, weight)]);
            }
        }
    }

    pub(crate) fn build(self) -> Bm25 {
        let total: f64 = self.lens.iter().map(|&l| f64::from(l)).sum();
        let avgdl = if self.lens.is_empty() { 1.0 } else { (total / self.lens.len() as f64).max(1.0) };
        Bm25 { postings: self.postings, lens: self.lens, avgdl }
    }
}

/// `scores` relative to the best one (all 0 when none is positive).
pub(crate) fn relative(mut scores: Vec<f64>) -> Vec<f64> {
    let max = scores.iter().copied().fold(0.0, f64::max);
    if max > 0.0 {
        scores.iter_mut().for_each(|s| *s /= max);
    } else {
        scores.iter_mut().for_each(|s| *s = 0.0);
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(words: &[(&str, u32)]) -> HashMap<String, u32> {
        words.iter().map(|(w, c)| ((*w).to_owned(), *c)).collect()
    }

    #[test]
    fn rarer_terms_and_more_occurrences_score_higher() {
        let index =
            Bm25::new(&[doc(&[("upload", 3), ("file", 1)]), doc(&[("upload", 1), ("file", 1)]), doc(&[("file", 2)])]);
        let s = index.scores(["upload"]);
        assert!(s[0] > s[1] && s[1] > 0.0 && s[2] == 0.0, "{s:?}");
        let s = index.scores(["upload", "file"]);
        assert!(s[1] > s[2], "the rarer term weighs more: {s:?}");
        assert_eq!(index.scores(["absent"]), vec![0.0; 3]);
        assert!(Bm25::new(&[]).scores(["x"]).is_empty());
    }

    #[test]
    fn a_built_index_is_the_index_of_its_documents() {
        let docs = [doc(&[("upload", 3), ("file", 1)]), doc(&[]), doc(&[("file", 2), ("queue", 1)])];
        let mut builder = Bm25::builder(docs.len());
        for (i, d) in docs.iter().enumerate() {
            for (term, count) in d {
                // In two parts: counts of one term in one document add up.
                builder.add(i, term, count - count / 2);
                builder.add(i, term, count / 2);
            }
        }
        let built = builder.build();
        let plain = Bm25::new(&docs);
        for query in [&["upload"][..], &["file", "queue"], &["absent"]] {
            assert_eq!(built.scores(query.iter().copied()), plain.scores(query.iter().copied()));
        }
    }

    #[test]
    fn it_scores_as_tandem_rank_does() {
        let texts = ["upload upload file retry", "file file queue", "queue worker retry retry"];
        let docs: Vec<HashMap<String, u32>> = texts
            .iter()
            .map(|t| {
                let mut m = HashMap::new();
                for term in tandem_rank::terms(t) {
                    *m.entry(term).or_default() += 1;
                }
                m
            })
            .collect();
        let ours = Bm25::new(&docs).scores(tandem_rank::terms("retry the upload").iter().map(String::as_str));
        let theirs = tandem_rank::scores(&texts.map(str::to_owned), "retry the upload");
        for (a, b) in ours.iter().zip(&theirs) {
            assert!((a - b).abs() < 1e-3, "{ours:?} vs {theirs:?}");
        }
    }
}
