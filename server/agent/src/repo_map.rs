//! `[agent] repo_map = true`: the first request of a session carries a small map of the codebase
//! (the `repo_map` tool's, `tandem-repo-map`), ranked for the first prompt, so the model starts
//! knowing where things are instead of spending its first turns on globs and greps.

use std::path::PathBuf;

use crate::env::Env;

/// The map's share of the model's context budget.
const SHARE_OF_BUDGET: u64 = 40;
/// The largest first map, in tokens.
const MAX_TOKENS: u64 = 512;
/// Below this budget no map is sent: a map this small names too few files to help.
const MIN_TOKENS: u64 = 64;
/// Files the first map shows at most.
const MAX_FILES: usize = 15;

/// The tokens the first map may take for `model`: 1/40 of its context budget, at most
/// [`MAX_TOKENS`]; `None` under [`MIN_TOKENS`].
pub(crate) fn tokens_for(limit: u64) -> Option<usize> {
    let tokens = (limit / SHARE_OF_BUDGET).min(MAX_TOKENS);
    (tokens >= MIN_TOKENS).then(|| usize::try_from(tokens).unwrap_or(usize::MAX))
}

/// The first request's map for `prompt`, as a block of the user's message, when the setting is
/// on and the map has anything to show.
pub(crate) async fn first_map(env: &Env, model: &str, stated_window: Option<u64>, prompt: &str) -> Option<String> {
    if !env.config.repo_map {
        return None;
    }
    let budget = crate::context::budget(env.provider(), model, stated_window);
    let max_tokens = tokens_for(budget.limit)?;
    let root: PathBuf = env.workspace.root().to_path_buf();
    let open = env.cache.documents().into_iter().filter(|(p, _)| p.starts_with(&root)).collect();
    let request = tandem_repo_map::Request {
        query: prompt.to_owned(),
        max_tokens,
        max_files: MAX_FILES,
        open,
        ..Default::default()
    };
    let map = tokio::task::spawn_blocking(move || tandem_repo_map::map(&root, &request)).await.ok()?.ok()?;
    if map.text.is_empty() {
        return None;
    }
    Some(format!(
        "<repo-map>\nThe files of this repository most relevant to the task, with their main definitions \
         (the `repo_map` tool gives more):\n{}</repo-map>",
        map.text
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_takes_a_small_share_of_the_budget() {
        assert_eq!(tokens_for(200_000), Some(512));
        assert_eq!(tokens_for(8_000), Some(200));
        assert_eq!(tokens_for(2_000), None);
    }
}
