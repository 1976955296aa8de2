//! A map of the codebase, for the model to find the right file first: per-file outlines
//! (definitions and the names each file uses) with tree-sitter's tags queries, cached by content
//! hash in Tandem's state directory; a ranking of the files for a query (personalized PageRank
//! over the graph of who uses what, with BM25 over paths, definitions and words); and the map as text,
//! in aider's format, within a token budget.
//!
//! [`map`] is the whole of it; [`outline()`](outline::outline) alone outlines one file
//! (`generate_readme` lists definitions with it).

mod bm25;
mod cache;
pub mod history;
pub mod lang;
mod map;
pub mod outline;
pub mod rank;
mod render;
pub mod scan;
pub mod words;

pub use cache::forget_in_process;
pub use lang::Lang;
pub use map::{DEFAULT_MAX_FILES, DEFAULT_MAX_TOKENS, MapError, Ranked, RepoMap, Request, explain, map};
pub use outline::{Def, Kind, Outline};
pub use render::tokens;
pub use scan::Stats;

#[cfg(test)]
mod tests;
