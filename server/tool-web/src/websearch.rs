//! `websearch`: a web search through the first configured backend, in this order: Brave Search
//! (`BRAVE_API_KEY` or `BRAVE_SEARCH_API_KEY`), Tavily (`TAVILY_API_KEY`), SerpAPI
//! (`SERPAPI_API_KEY`), SearXNG (`TANDEM_SEARXNG_URL`, an instance with JSON output on).
//!
//! Each backend's endpoint can be replaced (`TANDEM_BRAVE_URL`, `TANDEM_TAVILY_URL`,
//! `TANDEM_SERPAPI_URL`: the full endpoint URL), for a proxy or a local test server.

use std::collections::BTreeMap;

use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, TypedTool};

use super::{client_builder, cut, http_error, plain_text};

/// Results returned when the call does not say.
const DEFAULT_RESULTS: usize = 5;
/// Most results a call may ask for.
const MAX_RESULTS: usize = 20;
/// Longest snippet shown per result (bytes).
const MAX_SNIPPET: usize = 600;

const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
const TAVILY_URL: &str = "https://api.tavily.com/search";
const SERPAPI_URL: &str = "https://serpapi.com/search.json";

const DESCRIPTION: &str = "Search the web and get a numbered list of results (title, URL, snippet). Use it \
    for current information, documentation of a library version, or an error message; then read a result with \
    `webfetch`. Needs a search backend configured by the person (Brave, Tavily, SerpAPI or SearXNG).";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// What to search for.
    query: String,
    /// Results wanted (default 5, at most 20).
    num_results: Option<usize>,
}

/// A configured search backend.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Backend {
    Brave { key: String, endpoint: String },
    Tavily { key: String, endpoint: String },
    SerpApi { key: String, endpoint: String },
    Searxng { base: String },
}

impl Backend {
    /// Its name, and the variable that configured it (named in errors).
    fn names(&self) -> (&'static str, &'static str) {
        match self {
            Self::Brave { .. } => ("Brave Search", "BRAVE_API_KEY"),
            Self::Tavily { .. } => ("Tavily", "TAVILY_API_KEY"),
            Self::SerpApi { .. } => ("SerpAPI", "SERPAPI_API_KEY"),
            Self::Searxng { .. } => ("SearXNG", "TANDEM_SEARXNG_URL"),
        }
    }

    fn name(&self) -> &'static str {
        self.names().0
    }

    fn variable(&self) -> &'static str {
        self.names().1
    }
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hit {
    title: String,
    url: String,
    snippet: String,
}

pub(crate) struct WebSearch {
    /// The variables to read; `None` reads the process environment at each call.
    vars: Option<BTreeMap<String, String>>,
}

impl WebSearch {
    fn with(vars: Option<BTreeMap<String, String>>) -> Self {
        Self { vars }
    }

    /// Backends configured by the process environment, read at each call.
    pub fn from_process_env() -> Self {
        Self::with(None)
    }

    /// Backends configured by `vars` only.
    #[cfg(test)]
    pub fn from_vars(vars: &[(&str, &str)]) -> Self {
        Self::with(Some(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()))
    }

    fn var(&self, name: &str) -> Option<String> {
        let value = match &self.vars {
            Some(vars) => vars.get(name).cloned(),
            None => std::env::var(name).ok(),
        };
        value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
    }

    fn backend(&self) -> Option<Backend> {
        let endpoint = |var: &str, default: &str| self.var(var).unwrap_or_else(|| default.to_owned());
        if let Some(key) = self.var("BRAVE_API_KEY").or_else(|| self.var("BRAVE_SEARCH_API_KEY")) {
            return Some(Backend::Brave { key, endpoint: endpoint("TANDEM_BRAVE_URL", BRAVE_URL) });
        }
        if let Some(key) = self.var("TAVILY_API_KEY") {
            return Some(Backend::Tavily { key, endpoint: endpoint("TANDEM_TAVILY_URL", TAVILY_URL) });
        }
        if let Some(key) = self.var("SERPAPI_API_KEY") {
            return Some(Backend::SerpApi { key, endpoint: endpoint("TANDEM_SERPAPI_URL", SERPAPI_URL) });
        }
        self.var("TANDEM_SEARXNG_URL").map(|base| Backend::Searxng { base })
    }
}

impl TypedTool for WebSearch {
    const DECL: Decl = Decl::new("websearch", ToolGroup::Web, DESCRIPTION)
        .aliases(&["web_search", "search_web"])
        .keywords(&["web", "internet", "search", "google", "lookup", "documentation", "news"]);
    type Args = Args;

    async fn run(&self, args: Args, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let query = args.query.trim();
        if query.is_empty() {
            return Err(ToolError::new("`query` is empty; say what to search for"));
        }
        let count = args.num_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS);
        let Some(backend) = self.backend() else {
            return Err(ToolError::new(
                "no web search backend is configured, so websearch cannot run. The person can set one of: \
                 BRAVE_API_KEY (or BRAVE_SEARCH_API_KEY) for Brave Search, TAVILY_API_KEY for Tavily, \
                 SERPAPI_API_KEY for SerpAPI, or TANDEM_SEARXNG_URL for a SearXNG instance with JSON output. \
                 Meanwhile, use `webfetch` on a URL you know (for example the project's documentation)",
            )
            .with("notConfigured", true));
        };
        let body = request(&backend, query, count).await?;
        let hits = parse(&backend, &body)?;
        let shown: Vec<&Hit> = hits.iter().take(count).collect();
        let mut output = if shown.is_empty() {
            format!("No results for \"{query}\" ({}). Try other words or a shorter query.", backend.name())
        } else {
            format!("Results for \"{query}\" ({}):\n", backend.name())
        };
        for (i, hit) in shown.iter().enumerate() {
            output.push_str(&format!("\n{}. {}\n   {}\n", i + 1, hit.title, hit.url));
            if !hit.snippet.is_empty() {
                output.push_str(&format!("   {}\n", cut(&hit.snippet, MAX_SNIPPET)));
            }
        }
        if !shown.is_empty() {
            output.push_str("\nRead a result with `webfetch` before relying on it.");
        }
        Ok(ToolOutput::new(format!("Searched \"{query}\""), output)
            .with("backend", backend.name())
            .with("count", shown.len())
            .with("urls", shown.iter().map(|h| h.url.clone()).collect::<Vec<_>>()))
    }
}

/// Sends the backend's request; returns its JSON body.
async fn request(backend: &Backend, query: &str, count: usize) -> Result<Value, ToolError> {
    let client = client_builder().build().map_err(|err| ToolError::new(format!("could not set up HTTP: {err}")))?;
    let bad_url = |what: &str, err: url::ParseError| {
        ToolError::new(format!("the {} URL `{what}` is not valid ({err}); fix {}", backend.name(), backend.variable()))
    };
    let request = match backend {
        Backend::Brave { key, endpoint } => {
            let mut url = Url::parse(endpoint).map_err(|e| bad_url(endpoint, e))?;
            url.query_pairs_mut().append_pair("q", query).append_pair("count", &count.to_string());
            client.get(url).header("Accept", "application/json").header("X-Subscription-Token", key)
        }
        Backend::Tavily { key, endpoint } => {
            let url = Url::parse(endpoint).map_err(|e| bad_url(endpoint, e))?;
            let body = json!({ "query": query, "max_results": count, "search_depth": "basic" });
            client
                .post(url)
                .header("Content-Type", "application/json")
                .header("Authorization", format!("Bearer {key}"))
                .body(body.to_string())
        }
        Backend::SerpApi { key, endpoint } => {
            let mut url = Url::parse(endpoint).map_err(|e| bad_url(endpoint, e))?;
            url.query_pairs_mut()
                .append_pair("engine", "google")
                .append_pair("q", query)
                .append_pair("num", &count.to_string())
                .append_pair("api_key", key);
            client.get(url)
        }
        Backend::Searxng { base } => {
            let mut url = Url::parse(base.trim_end_matches('/')).map_err(|e| bad_url(base, e))?;
            if !url.path().ends_with("/search") {
                let path = format!("{}/search", url.path().trim_end_matches('/'));
                url.set_path(&path);
            }
            url.query_pairs_mut().append_pair("q", query).append_pair("format", "json");
            client.get(url).header("Accept", "application/json")
        }
    };
    let what = format!("searching with {}", backend.name());
    let response = request.send().await.map_err(|err| http_error(&what, &err))?;
    let status = response.status();
    let text = response.text().await.map_err(|err| http_error(&what, &err))?;
    if !status.is_success() {
        let advice = match (backend, status.as_u16()) {
            (Backend::Searxng { .. }, 403) => {
                "the instance refuses JSON output: add `json` to `search.formats` in its settings.yml".to_owned()
            }
            (_, 401 | 403) => format!("the API key was refused: the person should check {}", backend.variable()),
            (_, 429) => "rate limit or quota reached: wait before searching again".to_owned(),
            (_, 500..=599) => "the search service failed: try again later".to_owned(),
            _ => "the search request was not accepted".to_owned(),
        };
        let said = plain_text(cut(&text, 300));
        return Err(ToolError::new(format!(
            "{what} failed with HTTP {status}: {advice}.{}",
            if said.is_empty() { String::new() } else { format!(" The service said: {said}") }
        ))
        .with("status", status.as_u16()));
    }
    serde_json::from_str(&text).map_err(|err| {
        ToolError::new(format!(
            "{} answered with something that is not JSON ({err}); check {}",
            backend.name(),
            backend.variable()
        ))
    })
}

/// The results in the backend's response.
fn parse(backend: &Backend, body: &Value) -> Result<Vec<Hit>, ToolError> {
    if let Some(error) = body.get("error").and_then(Value::as_str) {
        return Err(ToolError::new(format!("{} reported an error: {error}", backend.name())));
    }
    // Where each backend puts its list, and the keys of a result's title, URL and snippet.
    let (list, [title, url, snippet]) = match backend {
        // {"web": {"results": [{"title", "url", "description", "extra_snippets"?}]}}
        Backend::Brave { .. } => (body.pointer("/web/results"), ["title", "url", "description"]),
        // {"results": [{"title", "url", "content", "score"}], "answer"?}
        Backend::Tavily { .. } => (body.get("results"), ["title", "url", "content"]),
        // {"organic_results": [{"position", "title", "link", "snippet"}]}
        Backend::SerpApi { .. } => (body.get("organic_results"), ["title", "link", "snippet"]),
        // {"results": [{"url", "title", "content", "engine"}]}
        Backend::Searxng { .. } => (body.get("results"), ["title", "url", "content"]),
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(plain_text).unwrap_or_default();
    let hits = list.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default().iter();
    let hits = hits.map(|r| Hit { title: text(r, title), url: text(r, url), snippet: text(r, snippet) });
    Ok(hits.filter(|h| !h.url.is_empty()).collect())
}

#[cfg(test)]
mod tests;
