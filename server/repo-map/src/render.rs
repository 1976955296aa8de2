//! The map as text, in aider's format: each file's path, then its most relevant definitions as
//! their signature lines (`│` before each, `⋮` where lines are left out), within a token budget.

use std::collections::HashSet;

use crate::outline::{Def, Kind, Outline};
use crate::rank::Model;

/// The tokens a text costs, estimated as providers' tokenizers average on code: four bytes a
/// token, rounded up.
pub fn tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Definitions shown per file at most.
const MAX_DEFS: usize = 8;

/// The definitions of `outline` worth showing for `terms`, best first: those whose name shares
/// words with the query, then those other files use most; methods after their types.
fn chosen(outline: &Outline, model: &Model, terms: &HashSet<String>, limit: usize) -> Vec<usize> {
    let mut scored: Vec<(f64, usize)> = outline
        .defs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind != Kind::Impl)
        .map(|(i, d)| {
            let matched = crate::rank::query_terms(&d.name).intersection(terms).count() as f64;
            let used = f64::from(model.users.get(&d.name).copied().unwrap_or(0));
            let nested = if d.parent.is_some() { 0.5 } else { 0.0 };
            (10.0 * matched + (1.0 + used).ln() - nested, i)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    scored.into_iter().map(|(_, i)| i).collect()
}

/// One file's block with at most `limit` definitions.
pub(crate) fn block(path: &str, outline: &Outline, model: &Model, terms: &HashSet<String>, limit: usize) -> String {
    let mut out = format!("{path}:\n");
    if limit == 0 {
        return out;
    }
    let mut lines: Vec<(u32, &str)> = Vec::new();
    let mut shown: HashSet<u32> = HashSet::new();
    for i in chosen(outline, model, terms, limit) {
        let def: &Def = &outline.defs[i];
        // A method shows under the line of what holds it.
        let mut parent = def.parent;
        let mut chain = Vec::new();
        while let Some(p) = parent {
            let Some(holder) = outline.defs.get(p as usize) else { break };
            chain.push(holder);
            parent = holder.parent;
        }
        for d in chain.into_iter().rev().chain(std::iter::once(def)) {
            if shown.insert(d.line) {
                lines.push((d.line, d.signature.as_str()));
            }
        }
    }
    lines.sort_by_key(|(line, _)| *line);
    let mut previous: Option<u32> = None;
    for (line, text) in lines {
        if previous.is_none_or(|p| p + 1 != line) {
            out.push_str("⋮\n");
        }
        out.push('│');
        out.push_str(text);
        out.push('\n');
        previous = Some(line);
    }
    if previous.is_some() {
        out.push_str("⋮\n");
    }
    out
}

/// The map of the `ranked` files (path, outline), best first, within `max_tokens` and
/// `max_files`: each file with as many of its definitions as fit, fewer when the budget runs
/// low, and no file once not even its path fits. Returns the text and how many files it shows.
pub(crate) fn render(
    ranked: &[(&str, &Outline)],
    model: &Model,
    terms: &HashSet<String>,
    max_tokens: usize,
    max_files: usize,
) -> (String, usize) {
    let mut out = String::new();
    let mut shown = 0;
    for (path, outline) in ranked.iter().take(max_files) {
        let mut placed = false;
        for limit in [MAX_DEFS, 3, 1, 0] {
            let block = block(path, outline, model, terms, limit);
            if (out.len() + block.len()).div_ceil(4) <= max_tokens {
                out.push_str(&block);
                placed = true;
                break;
            }
        }
        if !placed {
            break;
        }
        shown += 1;
    }
    (out, shown)
}
