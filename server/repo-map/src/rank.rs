//! Which files matter for a query: a graph with an edge from each file that uses a name to the
//! files that define it, ranked by personalized PageRank, combined with lexical signals (BM25
//! over each file's words, path and defined names; the share of the query's words in the path
//! and the defined names; the names the query says whole, or as adjacent words, among the file's
//! identifiers and definitions; the query's scope, as in `fix(parser): …`, in the path; BM25
//! over the messages of the past commits that changed the file, and the share of the scope's
//! past commits that changed it, when the workspace is a git repository), so a query with no
//! graph signal still ranks well. The weights ([`Weights`]) were tuned on real commits: the
//! path and the names a file defines say most, its words next, and PageRank mostly breaks near
//! ties.
//!
//! The personalization (where the random walk restarts) favours files whose path or defined
//! names share words with the query (split and stemmed as BM25 splits them), the files the
//! session has read or edited, and the files open in the editor. Edges follow aider's weights:
//! a name the query mentions counts ten times, a long specific name ten times, a name defined in
//! many files a tenth, and a name used often by a file counts with the square root of its uses.
//!
//! What does not depend on the query — documents, the BM25 statistics, the graph — is built
//! once per scan generation ([`Model`]) and reused by every query until a file changes.

use std::collections::{HashMap, HashSet};

use crate::bm25::{Bm25, relative};
use crate::outline::Kind;
use crate::scan::FileOutline;
use crate::words;

/// The damping of PageRank (the chance to follow an edge rather than restart).
const DAMPING: f64 = 0.85;
/// PageRank iterations at most (it stops earlier once it settles).
const ITERATIONS: usize = 40;
/// Names defined in more files than this are too common to link anything.
const MAX_DEFINERS: usize = 40;

/// What ranking needs of a scan, independent of the query.
pub struct Model {
    /// BM25 over each file's words (every word of its text, identifiers split, stemmed).
    content: Bm25,
    /// BM25 over each file's path.
    paths: Bm25,
    /// BM25 over the names each file defines.
    definitions: Bm25,
    /// Per file, the stemmed terms of its path.
    path_terms: Vec<HashSet<String>>,
    /// Per file, the stemmed terms of its name (empty for generic names: `mod.rs`, `index.js`).
    stem_terms: Vec<HashSet<String>>,
    /// Per file, the stemmed terms of the names it defines.
    def_terms: Vec<HashSet<String>>,
    /// BM25 over each file's compound identifiers, whole ([`words::joined`]).
    idents: Bm25,
    /// Per file, the compound names it defines, [`words::joined`].
    def_idents: Vec<HashSet<String>>,

    /// Per file, the files it links to and how strongly (aggregated over names).
    edges: Vec<Vec<(u32, f64)>>,
    /// Per defined name: (its stemmed terms, definers, users with their use counts).
    names: HashMap<String, NameInfo>,
    /// How many files use each name (for ordering a file's definitions).
    pub(crate) users: HashMap<String, u32>,
    /// Per file, whether it only declares ([`declares_only`]).
    declares: Vec<bool>,
}

struct NameInfo {
    terms: Vec<String>,
    definers: Vec<u32>,
    users: Vec<(u32, u32)>,
}

/// Stems words, each distinct word once.
#[derive(Default)]
struct Stemmer {
    known: HashMap<String, Option<String>>,
}

impl Stemmer {
    /// The term a lowercase word is matched by (`None` for stop words).
    fn term(&mut self, word: &str) -> Option<&str> {
        if !self.known.contains_key(word) {
            let term = tandem_rank::terms(word).into_iter().next();
            self.known.insert(word.to_owned(), term);
        }
        self.known.get(word).and_then(|t| t.as_deref())
    }

    /// The terms of `text`, split as identifiers are, in order.
    fn terms(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut lower = String::new();
        words::each_word(text, |word| {
            lower.clear();
            lower.extend(word.chars().flat_map(char::to_lowercase));
            if let Some(term) = self.term(&lower) {
                out.push(term.to_owned());
            }
        });
        out
    }

    /// Adds the terms of `text` (split as identifiers are) to document `doc` of `index`, and
    /// to `set` when given.
    fn add(&mut self, text: &str, doc: usize, index: &mut crate::bm25::Builder, mut set: Option<&mut HashSet<String>>) {
        let mut lower = String::new();
        words::each_word(text, |word| {
            lower.clear();
            lower.extend(word.chars().flat_map(char::to_lowercase));
            if let Some(term) = self.term(&lower) {
                index.add(doc, term, 1);
                if let Some(set) = set.as_deref_mut()
                    && !set.contains(term)
                {
                    set.insert(term.to_owned());
                }
            }
        });
    }
}

/// File names that say nothing about what a file holds.
const GENERIC_STEMS: &[&str] = &[
    "lib", "mod", "main", "index", "init", "__init__", "tests", "test", "utils", "util", "types", "common", "helpers",
];

/// The stemmed terms of a file's name without its extension, unless the name is generic.
fn stem_terms(rel: &str, stemmer: &mut Stemmer) -> HashSet<String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let stem = name.split('.').next().unwrap_or(name);
    if GENERIC_STEMS.contains(&stem) {
        return HashSet::new();
    }
    stemmer.terms(stem).into_iter().collect()
}

fn term_set(text: &str) -> HashSet<String> {
    tandem_rank::terms(&words::spaced(text)).into_iter().collect()
}

/// Whether `name` is specific: long, and made of several words.
fn specific(name: &str) -> bool {
    name.len() >= 8 && words::split(name).len() > 1
}

impl Model {
    /// The model of `files`.
    pub fn new(files: &[FileOutline]) -> Self {
        let n = files.len();
        let mut stemmer = Stemmer::default();
        let (mut content, mut paths) = (Bm25::builder(n), Bm25::builder(n));
        let (mut definitions, mut idents) = (Bm25::builder(n), Bm25::builder(n));
        let mut path_terms = vec![HashSet::new(); n];
        let mut def_terms = vec![HashSet::new(); n];
        for (i, file) in files.iter().enumerate() {
            for (word, count) in &file.outline.words {
                if let Some(term) = stemmer.term(word) {
                    content.add(i, term, *count);
                }
            }
            stemmer.add(&file.rel, i, &mut paths, Some(&mut path_terms[i]));
            for def in file.outline.defs.iter().filter(|d| d.kind != Kind::Impl) {
                stemmer.add(&def.name, i, &mut definitions, Some(&mut def_terms[i]));
            }
            for (ident, count) in &file.outline.idents {
                idents.add(i, ident, *count);
            }
        }
        let (content, paths) = (content.build(), paths.build());
        let (definitions, idents) = (definitions.build(), idents.build());
        let stem_terms = files.iter().map(|f| stem_terms(&f.rel, &mut stemmer)).collect();
        let def_idents = files
            .iter()
            .map(|f| {
                let defs = f.outline.defs.iter().filter(|d| d.kind != Kind::Impl);
                defs.flat_map(|d| words::compounds(&d.name).map(|c| words::joined(&c))).collect()
            })
            .collect();

        let mut names: HashMap<String, NameInfo> = HashMap::new();
        for (i, file) in files.iter().enumerate() {
            let mut seen = HashSet::new();
            for def in &file.outline.defs {
                if def.kind == Kind::Impl || !seen.insert(def.name.as_str()) {
                    continue;
                }
                match names.get_mut(&def.name) {
                    Some(info) => info.definers.push(i as u32),
                    None => {
                        let terms = stemmer.terms(&def.name);
                        names.insert(def.name.clone(), NameInfo { terms, definers: vec![i as u32], users: Vec::new() });
                    }
                }
            }
        }
        let mut users: HashMap<String, u32> = HashMap::new();
        for (i, file) in files.iter().enumerate() {
            for (name, count) in &file.outline.refs {
                if let Some(info) = names.get_mut(name) {
                    info.users.push((i as u32, *count));
                    match users.get_mut(name) {
                        Some(n) => *n += 1,
                        None => {
                            users.insert(name.clone(), 1);
                        }
                    }
                }
            }
        }
        let mut edges: Vec<HashMap<u32, f64>> = vec![HashMap::new(); files.len()];
        for (name, info) in &names {
            if info.definers.len() > MAX_DEFINERS {
                continue;
            }
            let base = base_weight(name, info.definers.len());
            for &(user, count) in &info.users {
                for &definer in &info.definers {
                    if definer != user {
                        *edges[user as usize].entry(definer).or_default() +=
                            base * f64::from(count).sqrt() / info.definers.len() as f64;
                    }
                }
            }
        }
        let edges = edges
            .into_iter()
            .map(|m| {
                let mut v: Vec<(u32, f64)> = m.into_iter().collect();
                v.sort_by_key(|(t, _)| *t);
                v
            })
            .collect();
        let declares = files.iter().map(|f| declares_only(&f.rel)).collect();
        Self {
            content,
            paths,
            definitions,
            path_terms,
            stem_terms,
            def_terms,
            idents,
            def_idents,
            edges,
            names,
            users,
            declares,
        }
    }
}

/// How much a file that only declares ([`declares_only`]) scores of what it would: a header
/// and its source say the same names, and a task changes the source far more often (on the
/// history of eight C projects, a header ranked first was the changed file one time in seven).
/// Among headers alone, the order is the same.
const DECLARES_ONLY: f64 = 0.85;

/// Whether the file at `rel` holds declarations whose bodies live elsewhere: C and C++ headers,
/// TypeScript's declaration files, Python's stubs.
fn declares_only(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(ext, "h" | "hh" | "hpp" | "hxx" | "H" | "pyi")
        || [".d.ts", ".d.mts", ".d.cts"].iter().any(|suffix| name.ends_with(suffix))
}

/// Per file, the share of the query's scope (`fix(parser): …`, `net/http: …`) in its path:
/// 1 when the path holds the scope's words joined (`VS Code` in `editors/vscode/`), else the
/// share of the scope's terms in the path's; all 0 without a scope.
fn scope_in_path(model: &Model, query: &str) -> Vec<f64> {
    let n = model.path_terms.len();
    let Some(scope) = words::scope(query) else { return vec![0.0; n] };
    let terms = term_set(scope);
    let whole = tandem_rank::terms(&words::joined(&scope.replace(' ', ""))).into_iter().next();
    model
        .path_terms
        .iter()
        .map(|path| {
            if whole.as_ref().is_some_and(|w| path.contains(w)) {
                1.0
            } else if terms.is_empty() {
                0.0
            } else {
                terms.intersection(path).count() as f64 / terms.len() as f64
            }
        })
        .collect()
}

fn base_weight(name: &str, definers: usize) -> f64 {
    let mut weight = 1.0;
    if specific(name) {
        weight *= 10.0;
    }
    if name.starts_with('_') {
        weight *= 0.1;
    }
    if definers > 5 {
        weight *= 0.1;
    }
    weight
}

/// What a ranking is asked.
#[derive(Clone, Debug, Default)]
pub struct Focus {
    /// The query's text.
    pub query: String,
    /// Files the session read or edited (indices into the scan's files).
    pub session: Vec<usize>,
    /// Files open in the editor (indices).
    pub open: Vec<usize>,
    /// The repository's history, with each file's path in it (indices), when there is one.
    pub history: Option<(std::sync::Arc<crate::history::Changes>, Vec<Option<u32>>)>,
}

/// The query's terms: its words split as identifiers are, stemmed, stop words out.
pub fn query_terms(query: &str) -> HashSet<String> {
    tandem_rank::terms(&words::spaced(query)).into_iter().collect()
}

/// How the signals of [`features`] add up to a file's score.
#[derive(Clone, Copy, Debug)]
pub struct Weights {
    /// BM25 over the file's words, relative to the best file's.
    pub content: f64,
    /// BM25 over the file's path, relative to the best file's.
    pub path_bm25: f64,
    /// BM25 over the names the file defines, relative to the best file's.
    pub defs_bm25: f64,
    /// Share of the query's terms in the file's path.
    pub path: f64,
    /// Share of the file name's terms the query has (all of them: 1).
    pub stem: f64,
    /// Share of the query's terms among the names the file defines.
    pub defs: f64,
    /// Personalized PageRank, relative to the best file's.
    pub graph: f64,
    /// Share of the query's terms the file has anywhere (words, path, definitions).
    pub coverage: f64,
    /// Share of the query's compound identifiers (`parse_args`, `HttpClient`) the file defines.
    pub def_idents: f64,
    /// BM25 of the names the query says (its compound identifiers, and two or three adjacent
    /// words joined: "token meter" for `tokenMeter`) over the file's compound identifiers,
    /// relative to the best file's.
    pub phrase: f64,
    /// Share of the query's scope (`parser` of `fix(parser): …`) in the file's path.
    pub scope: f64,
    /// BM25 over the messages of the past commits that changed the file (recent ones and
    /// subjects weighing more), relative to the best file's.
    pub history: f64,
    /// Share of the past commits with the query's scope (`cp` of `cp: …`) that changed the
    /// file: a scope's commits say which files it lives in, whatever the files are called.
    pub scope_history: f64,
    /// How recently the file changed (1 when the newest commit did, `1/e` five commits back).
    /// It is added below the best file only, and never lifts a file above it ([`rank`]).
    pub recency: f64,
}

impl Weights {
    fn array(&self) -> [f64; FEATURES] {
        [
            self.content,
            self.path_bm25,
            self.defs_bm25,
            self.path,
            self.stem,
            self.defs,
            self.graph,
            self.coverage,
            self.def_idents,
            self.phrase,
            self.scope,
            self.history,
            self.scope_history,
            self.recency,
        ]
    }
}

impl Default for Weights {
    /// Tuned on real commits (one half of them; the other half agrees): the query's words in
    /// the path and the defined names say most about which file a task touches, the text's
    /// words come next, and the graph only breaks near ties. A scope (`parser: …`) moves its
    /// folder's files up; a name the query says whole favours the file defining it. A file whose
    /// past commits read like the query moves up about as much as a scope moves its folder, and
    /// the files that most of a scope's past commits changed a little more: where a project
    /// names its parts in its subjects (`repo-map: …`, `cp: …`), its own history knows where
    /// each part lives, whatever the files are called (checked on the history of this
    /// repository and of eight C projects of GNU: it moves both up, r@1 most). Below the best
    /// file, the files changed in the last few commits move up a little: a task's work spans
    /// commits (on the GNU projects it moves r@5 up two points; on this repository, whose
    /// commits move between areas, it changes nothing), but it does not say which file a query
    /// means, so it never outranks the best match (as a plain signal, it cost this repository
    /// two to seven points of r@1).
    fn default() -> Self {
        Self {
            content: 0.5,
            path_bm25: 0.05,
            defs_bm25: 0.05,
            path: 1.0,
            stem: 0.05,
            defs: 0.2,
            graph: 0.05,
            coverage: 0.0,
            def_idents: 0.3,
            phrase: 0.1,
            scope: 0.3,
            history: 0.3,
            scope_history: 0.5,
            recency: 0.1,
        }
    }
}

/// The number of signals [`features`] gives per file.
pub const FEATURES: usize = 14;
/// Where [`features`] puts the history signal ([`Weights::history`]).
pub const HISTORY: usize = 11;
/// Where [`features`] puts the scope's history ([`Weights::scope_history`]).
pub const SCOPE_HISTORY: usize = 12;
/// Where [`features`] puts how recently the file changed ([`Weights::recency`]).
pub const RECENCY: usize = 13;

/// Every file's score for `focus` (finite, not negative), in the files' order.
pub fn rank(model: &Model, focus: &Focus) -> Vec<f64> {
    let weights = Weights::default();
    // Recency is added apart, below the best file only.
    let mut array = weights.array();
    array[RECENCY] = 0.0;
    let features = features(model, focus);
    let mut scores: Vec<f64> = features
        .iter()
        .zip(&model.declares)
        .map(|(f, &declares)| {
            let score: f64 = f.iter().zip(array).map(|(x, w)| x * w).sum();
            let score = if declares { score * DECLARES_ONLY } else { score };
            if score.is_finite() { score.max(0.0) } else { 0.0 }
        })
        .collect();
    let recency: Vec<f64> = features.iter().map(|f| f[RECENCY]).collect();
    add_below_the_best(&mut scores, &recency, weights.recency);
    scores
}

/// Adds `weight × extra` to every score but the best one's (the first of the highest, as the
/// files' order breaks ties), never reaching it: what `extra` says reorders the rest, not the
/// first. Scores stay finite and not negative, and none goes down.
pub(crate) fn add_below_the_best(scores: &mut [f64], extra: &[f64], weight: f64) {
    let Some(best) = (0..scores.len()).reduce(|b, i| if scores[i] > scores[b] { i } else { b }) else { return };
    let top = scores[best];
    let below = top.next_down();
    for (i, (score, x)) in scores.iter_mut().zip(extra).enumerate() {
        let raised = *score + weight * x;
        if i != best && raised.is_finite() {
            *score = raised.min(below).max(*score);
        }
    }
}

/// Every file's signals for `focus`, each in 0..=1, in the order of [`Weights`]' fields.
pub fn features(model: &Model, focus: &Focus) -> Vec<[f64; FEATURES]> {
    let n = model.edges.len();
    if n == 0 {
        return Vec::new();
    }
    let terms = query_terms(&focus.query);
    let listed_terms = tandem_rank::terms(&words::spaced(&focus.query));
    let listed = || listed_terms.iter().map(String::as_str);
    let lexical = relative(model.content.scores(listed()));
    let path_bm25 = relative(model.paths.scores(listed()));
    let defs_bm25 = relative(model.definitions.scores(listed()));
    let mut covered = vec![0.0; n];
    for term in &terms {
        let mut holders: HashSet<u32> = HashSet::new();
        for index in [&model.content, &model.paths, &model.definitions] {
            holders.extend(index.holders(term));
        }
        for holder in holders {
            covered[holder as usize] += 1.0 / terms.len() as f64;
        }
    }

    let compounds: Vec<String> = words::compounds(&focus.query).map(|c| words::joined(&c)).collect();
    let def_idents: Vec<f64> = model
        .def_idents
        .iter()
        .map(|defined| {
            let named = compounds.iter().filter(|c| defined.contains(*c)).count();
            named as f64 / compounds.len().max(1) as f64
        })
        .collect();
    let phrases = words::query_idents(&focus.query);
    let phrase = relative(model.idents.scores(phrases.iter().map(String::as_str)));
    let scope = scope_in_path(model, &focus.query);
    let (history, scope_history, recency) = match &focus.history {
        Some((changes, ids)) => {
            (changes.scores(&listed_terms, ids), changes.scoped(&focus.query, ids), changes.recency(ids))
        }
        None => (vec![0.0; n], vec![0.0; n], vec![0.0; n]),
    };

    let share = |set: &HashSet<String>| set.intersection(&terms).count() as f64 / terms.len().max(1) as f64;
    let path: Vec<f64> = model.path_terms.iter().map(share).collect();
    let defs: Vec<f64> = model.def_terms.iter().map(share).collect();
    let stem: Vec<f64> = model
        .stem_terms
        .iter()
        .map(|s| if s.is_empty() { 0.0 } else { s.intersection(&terms).count() as f64 / s.len() as f64 })
        .collect();
    // Where the walk restarts.
    let mut restart = vec![0.0; n];
    for i in 0..n {
        restart[i] += path[i] + stem[i] + 0.5 * defs[i] + lexical[i];
    }
    for &i in &focus.session {
        if let Some(r) = restart.get_mut(i) {
            *r += 1.0;
        }
    }
    for &i in &focus.open {
        if let Some(r) = restart.get_mut(i) {
            *r += 1.0;
        }
    }
    let total: f64 = restart.iter().sum();
    if total > 0.0 {
        restart.iter_mut().for_each(|r| *r /= total);
    } else {
        restart.iter_mut().for_each(|r| *r = 1.0 / n as f64);
    }

    // Names the query mentions weigh ten times more: the extra weight of their edges.
    let mut extra: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n];
    if !terms.is_empty() {
        for (name, info) in &model.names {
            if info.terms.is_empty()
                || info.definers.len() > MAX_DEFINERS
                || !info.terms.iter().all(|t| terms.contains(t))
            {
                continue;
            }
            let base = base_weight(name, info.definers.len()) * 9.0;
            for &(user, count) in &info.users {
                for &definer in &info.definers {
                    if definer != user {
                        extra[user as usize]
                            .push((definer, base * f64::from(count).sqrt() / info.definers.len() as f64));
                    }
                }
            }
        }
    }
    let out_weight: Vec<f64> = (0..n)
        .map(|i| model.edges[i].iter().map(|e| e.1).sum::<f64>() + extra[i].iter().map(|e| e.1).sum::<f64>())
        .collect();

    let mut rank = restart.clone();
    let mut next = vec![0.0; n];
    for _ in 0..ITERATIONS {
        next.iter_mut().zip(&restart).for_each(|(x, r)| *x = (1.0 - DAMPING) * r);
        let mut dangling = 0.0;
        for i in 0..n {
            if out_weight[i] <= 0.0 {
                dangling += rank[i];
                continue;
            }
            let share = DAMPING * rank[i] / out_weight[i];
            for &(j, w) in model.edges[i].iter().chain(&extra[i]) {
                next[j as usize] += share * w;
            }
        }
        next.iter_mut().zip(&restart).for_each(|(x, r)| *x += DAMPING * dangling * r);
        let change: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
        std::mem::swap(&mut rank, &mut next);
        if change < 1e-9 {
            break;
        }
    }
    let max_rank = rank.iter().copied().fold(0.0, f64::max);
    (0..n)
        .map(|i| {
            let graph = if max_rank > 0.0 { rank[i] / max_rank } else { 0.0 };
            [
                lexical[i],
                path_bm25[i],
                defs_bm25[i],
                path[i],
                stem[i],
                defs[i],
                graph,
                covered[i],
                def_idents[i],
                phrase[i],
                scope[i],
                history[i],
                scope_history[i],
                recency[i],
            ]
            .map(|x| if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 })
        })
        .collect()
}
