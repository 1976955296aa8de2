//! The map of a workspace for a request: scan (cached outlines), rank, render.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use globset::{Glob, GlobSetBuilder};
use serde::Serialize;

use crate::rank::{FEATURES, Focus, Model, features, query_terms, rank};
use crate::render::render;
use crate::scan::{ScanOptions, Stats, scan_unsaved};

/// Tokens a map takes when the request does not say.
pub const DEFAULT_MAX_TOKENS: usize = 1024;
/// Files a map shows at most when the request does not say.
pub const DEFAULT_MAX_FILES: usize = 30;

/// What a map is asked.
#[derive(Clone, Debug)]
pub struct Request {
    /// What the map is for (a task, a question, names): ranks the files.
    pub query: String,
    /// Only files whose path (relative to the root) matches one of these globs.
    pub paths: Vec<String>,
    /// The text's budget, in tokens (four bytes a token).
    pub max_tokens: usize,
    /// Files shown at most.
    pub max_files: usize,
    /// Files the session read or edited (absolute).
    pub session: Vec<PathBuf>,
    /// Documents open in the editor (absolute path, text): they rank higher, and their text
    /// (unsaved changes included) is what is outlined.
    pub open: Vec<(PathBuf, String)>,
    /// Where the outline cache is kept on disk; default (`None`): the workspace's folder in
    /// Tandem's state directory.
    pub cache: Option<PathBuf>,
    /// Whether the repository's git history (from HEAD) helps rank: files that past commits
    /// with subjects like the query changed move up. Default: yes.
    pub history: bool,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            query: String::new(),
            paths: Vec::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
            max_files: DEFAULT_MAX_FILES,
            session: Vec::new(),
            open: Vec::new(),
            cache: None,
            history: true,
        }
    }
}

/// A file of the map and its score.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranked {
    /// Relative to the root.
    pub path: String,
    /// Its relevance (higher is better).
    pub score: f64,
}

/// A map.
#[derive(Clone, Debug)]
pub struct RepoMap {
    /// The text: files best first, each with its signature lines.
    pub text: String,
    /// The files the text shows, best first, with their scores.
    pub shown: Vec<Ranked>,
    /// Every outlined file, best first, with its score.
    pub ranked: Vec<Ranked>,
    /// What the scan saw and did.
    pub stats: Stats,
}

/// Why no map was made.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// A glob of `paths` does not parse.
    #[error("invalid glob `{glob}` in `paths`: {message}")]
    Glob {
        /// The glob.
        glob: String,
        /// What is wrong with it.
        message: String,
    },
}

/// A model with the scan generation and the `paths` it was built for.
type Cached = (u64, Vec<String>, Arc<Model>);
/// The last model of each workspace (and cache folder).
type ModelKey = (PathBuf, Option<PathBuf>);
static MODELS: LazyLock<Mutex<HashMap<ModelKey, Cached>>> = LazyLock::new(Default::default);

/// The map of the workspace at `root` for `request`.
pub fn map(root: &Path, request: &Request) -> Result<RepoMap, MapError> {
    let (scan, model, focus) = prepare(root, request)?;
    let scores = rank(&model, &focus);
    let mut order: Vec<usize> = (0..scan.files.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(scan.files[a].rel.cmp(&scan.files[b].rel)));
    let ranked: Vec<Ranked> =
        order.iter().map(|&i| Ranked { path: scan.files[i].rel.clone(), score: round(scores[i]) }).collect();
    let terms = query_terms(&request.query);
    let candidates: Vec<(&str, &crate::outline::Outline)> =
        order.iter().map(|&i| (scan.files[i].rel.as_str(), scan.files[i].outline.as_ref())).collect();
    let (text, count) = render(&candidates, &model, &terms, request.max_tokens, request.max_files);
    let shown = ranked.iter().take(count).cloned().collect();
    Ok(RepoMap { text, shown, ranked, stats: scan.stats })
}

/// Each file's ranking signals for `request` ([`features`](crate::rank::features)), by path:
/// what the score of [`map`] is made of.
pub fn explain(root: &Path, request: &Request) -> Result<Vec<(String, [f64; FEATURES])>, MapError> {
    let (scan, model, focus) = prepare(root, request)?;
    let features = features(&model, &focus);
    Ok(scan.files.iter().map(|f| f.rel.clone()).zip(features).collect())
}

/// The scan, its model and the request's focus.
fn prepare(root: &Path, request: &Request) -> Result<(crate::scan::Scan, Arc<Model>, Focus), MapError> {
    let globs = if request.paths.is_empty() {
        None
    } else {
        let mut builder = GlobSetBuilder::new();
        for glob in &request.paths {
            let parsed = Glob::new(glob.trim_start_matches("./"))
                .map_err(|err| MapError::Glob { glob: glob.clone(), message: err.kind().to_string() })?;
            builder.add(parsed);
        }
        Some(
            builder
                .build()
                .map_err(|err| MapError::Glob { glob: request.paths.join(", "), message: err.to_string() })?,
        )
    };
    let overrides: HashMap<PathBuf, String> = request.open.iter().cloned().collect();
    // The history is read while the tree is scanned.
    let history = request.history.then(|| {
        let (root, at) = (root.to_path_buf(), crate::cache::location(root, request.cache.as_deref()));
        std::thread::spawn(move || crate::history::changes(&root, &at))
    });
    let (scan, unsaved) = scan_unsaved(root, &ScanOptions { globs, overrides, cache: request.cache.clone() });

    let key = (root.to_path_buf(), request.cache.clone());
    let cached = MODELS.lock().unwrap_or_else(PoisonError::into_inner).get(&key).cloned();
    let model = match cached {
        Some((generation, paths, model)) if generation == scan.generation && paths == request.paths => {
            unsaved.save();
            model
        }
        _ => {
            // The cache is written while the model is built (both before the map returns).
            let model = std::thread::scope(|scope| {
                scope.spawn(|| unsaved.save());
                Arc::new(Model::new(&scan.files))
            });
            MODELS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key, (scan.generation, request.paths.clone(), model.clone()));
            model
        }
    };

    let index: HashMap<&str, usize> = scan.files.iter().enumerate().map(|(i, f)| (f.rel.as_str(), i)).collect();
    let indices = |paths: &mut dyn Iterator<Item = &PathBuf>| -> Vec<usize> {
        paths
            .filter_map(|p| p.strip_prefix(root).ok())
            .filter_map(|rel| index.get(rel.to_string_lossy().as_ref()).copied())
            .collect()
    };
    let history = history.and_then(|thread| thread.join().ok()).flatten().map(|changes| {
        let ids = changes.ids(scan.files.iter().map(|f| f.rel.as_str()));
        (changes, ids)
    });
    let focus = Focus {
        query: request.query.clone(),
        session: indices(&mut request.session.iter()),
        open: indices(&mut request.open.iter().map(|(p, _)| p)),
        history,
    };
    Ok((scan, model, focus))
}

fn round(score: f64) -> f64 {
    (score * 10_000.0).round() / 10_000.0
}
