//! Ranking MCP tools: BM25 ([`tandem_rank`], the ranker `tool_search` uses) over each tool's
//! name and description (which carries its server's tags), combined
//! with what this process has seen — reliability (smoothed success rate), latency, and inertia
//! (how often a tool followed the one called last).
//!
//! score = 0.6 · bm25/max_bm25 + 0.2 · reliability + 0.1 · speed + 0.1 · inertia, where
//! reliability = (ok + 1) / (calls + 2), speed = 1 / (1 + mean_latency_s), and inertia =
//! transitions(last → tool) / transitions(last → any). Without a query the BM25 part is 0.

use std::collections::HashMap;

/// One rankable tool.
#[derive(Clone, Debug)]
pub struct Doc {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// What it is ranked by: [`tandem_rank::document`] of its name and description (which
    /// names the server's tags).
    pub text: String,
}

/// What the process has seen of one tool.
#[derive(Clone, Debug, Default)]
pub struct ToolStats {
    /// Calls that returned a result.
    pub ok: u64,
    /// Calls that failed (including results the server marked as errors).
    pub failed: u64,
    /// Sum of latencies, ms.
    pub total_ms: u64,
}

impl ToolStats {
    /// Smoothed success rate (Laplace): 0.5 with no calls.
    pub fn reliability(&self) -> f64 {
        (self.ok as f64 + 1.0) / ((self.ok + self.failed) as f64 + 2.0)
    }

    /// Mean latency in ms, if any call was made.
    pub fn mean_ms(&self) -> Option<f64> {
        let calls = self.ok + self.failed;
        (calls > 0).then(|| self.total_ms as f64 / calls as f64)
    }
}

/// Ranking state: per-tool stats and transitions.
#[derive(Debug, Default)]
pub struct Ranker {
    /// Stats by tool.
    pub stats: HashMap<String, ToolStats>,
    transitions: HashMap<(String, String), u64>,
    last: Option<String>,
}

/// One ranked tool with the parts of its score.
#[derive(Clone, Debug)]
pub struct Ranked {
    /// Tool name.
    pub name: String,
    /// Final score.
    pub score: f64,
    /// Normalised BM25 (0..1).
    pub relevance: f64,
    /// Smoothed success rate.
    pub reliability: f64,
    /// 1 / (1 + mean latency in s).
    pub speed: f64,
    /// Share of transitions from the last tool.
    pub inertia: f64,
}

/// BM25 of `query` against every doc ([`tandem_rank::scores`], shared with `tool_search`).
pub fn bm25(docs: &[Doc], query: &str) -> Vec<f64> {
    let texts: Vec<String> = docs.iter().map(|doc| doc.text.clone()).collect();
    tandem_rank::scores(&texts, query)
}

impl Ranker {
    /// Records a call's outcome (and the transition from the previous call).
    pub fn record(&mut self, name: &str, ok: bool, ms: u64) {
        let stats = self.stats.entry(name.to_owned()).or_default();
        if ok {
            stats.ok += 1;
        } else {
            stats.failed += 1;
        }
        stats.total_ms += ms;
        if let Some(last) = self.last.replace(name.to_owned()) {
            *self.transitions.entry((last, name.to_owned())).or_insert(0) += 1;
        }
    }

    /// Ranks `docs` for `query` (empty: by history alone), best first; ties keep the docs' order.
    pub fn rank(&self, docs: &[Doc], query: &str) -> Vec<Ranked> {
        let relevance = bm25(docs, query);
        let max = relevance.iter().copied().fold(0.0f64, f64::max);
        let from_last: u64 = match &self.last {
            Some(last) => self.transitions.iter().filter(|((a, _), _)| a == last).map(|(_, n)| n).sum(),
            None => 0,
        };
        let mut ranked: Vec<Ranked> = docs
            .iter()
            .zip(relevance)
            .map(|(doc, rel)| {
                let stats = self.stats.get(&doc.name).cloned().unwrap_or_default();
                let relevance = if max > 0.0 { rel / max } else { 0.0 };
                let reliability = stats.reliability();
                let speed = stats.mean_ms().map_or(0.5, |ms| 1.0 / (1.0 + ms / 1000.0));
                let inertia = match &self.last {
                    Some(last) if from_last > 0 => {
                        *self.transitions.get(&(last.clone(), doc.name.clone())).unwrap_or(&0) as f64 / from_last as f64
                    }
                    _ => 0.0,
                };
                let score = 0.6 * relevance + 0.2 * reliability + 0.1 * speed + 0.1 * inertia;
                Ranked { name: doc.name.clone(), score, relevance, reliability, speed, inertia }
            })
            .collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs() -> Vec<Doc> {
        vec![
            Doc { name: "mcp__fs__read_file".into(), text: "Read the complete contents of a file. files".into() },
            Doc { name: "mcp__fs__list_directory".into(), text: "List the entries of a directory. files".into() },
            Doc { name: "mcp__web__fetch".into(), text: "Fetch a URL and return its content as markdown. web".into() },
        ]
    }

    #[test]
    fn relevance_first_then_history() {
        let mut ranker = Ranker::default();
        let names = |r: Vec<Ranked>| r.into_iter().map(|r| r.name).collect::<Vec<_>>();
        assert_eq!(names(ranker.rank(&docs(), "fetch url markdown"))[0], "mcp__web__fetch");
        assert_eq!(names(ranker.rank(&docs(), "list directory entries"))[0], "mcp__fs__list_directory");
        // No query: history decides. A reliable, fast tool beats one that fails.
        for _ in 0..5 {
            ranker.record("mcp__fs__read_file", false, 3000);
            ranker.record("mcp__web__fetch", true, 50);
        }
        let ranked = ranker.rank(&docs(), "");
        assert_eq!(ranked[0].name, "mcp__web__fetch");
        let failing = ranked.iter().position(|r| r.name == "mcp__fs__read_file").unwrap_or_default();
        assert!(failing > 0, "{ranked:?}");
        assert!((ranked[0].reliability - 6.0 / 7.0).abs() < 1e-9);
        // Inertia: after `fetch`, `read_file` always followed.
        assert!(ranked.iter().any(|r| r.name == "mcp__fs__read_file" && (r.inertia - 1.0).abs() < 1e-9));
    }
}
