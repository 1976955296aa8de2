//! `webfetch`: one web page, HTML converted to Markdown, other text passed through, binary
//! refused. The host is resolved and checked before every connection (and every redirect hop);
//! the connection goes to the checked address.

use reqwest::Url;
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, TypedTool};

use super::guard::{Access, check_url, resolve};
use super::{REQUEST_TIMEOUT, client_builder, cut, http_error, plain_text, size};

/// Bytes downloaded when the call does not say.
const DEFAULT_MAX_BYTES: u64 = 5 * 1024 * 1024;
/// The most a call may ask to download.
const MAX_MAX_BYTES: u64 = 50 * 1024 * 1024;
/// Longest content the model gets.
pub(crate) const MAX_OUTPUT_BYTES: usize = 100 * 1024;
/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;

const DESCRIPTION: &str = "Fetch a web page by URL (http/https) and return its content: HTML converted to \
    Markdown, other text (JSON, plain text, source) as it is; binary files are refused. Use it to read \
    documentation, an issue or an article the person or a search result points to. Say in `prompt` what you \
    are looking for in the page. Results over 100 KB are truncated. Loopback and private-network addresses \
    are refused unless the person allowed them.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// The URL to fetch (http or https).
    url: String,
    /// What you want from the page (a question or what to extract); repeated with the content.
    prompt: Option<String>,
    /// Download at most this many bytes (default 5 MB, at most 50 MB).
    max_bytes: Option<u64>,
}

pub(crate) struct WebFetch {
    access: Access,
}

impl WebFetch {
    pub fn new(access: Access) -> Self {
        Self { access }
    }
}

impl TypedTool for WebFetch {
    const DECL: Decl = Decl::new("webfetch", ToolGroup::Web, DESCRIPTION)
        .aliases(&["web_fetch", "fetch", "fetch_url", "read_url"])
        .keywords(&["web", "url", "http", "page", "download", "documentation", "html", "markdown"]);
    type Args = Args;

    async fn run(&self, args: Args, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let max_bytes = args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).clamp(1, MAX_MAX_BYTES);
        let fetched = match tokio::time::timeout(REQUEST_TIMEOUT, fetch(&args.url, max_bytes, &self.access)).await {
            Ok(fetched) => fetched?,
            Err(_) => {
                return Err(ToolError::new(format!(
                    "fetching {} timed out after {} s; the server may be slow or down: try again later or use another source",
                    args.url.trim(),
                    REQUEST_TIMEOUT.as_secs()
                ))
                .with("timeout", true));
            }
        };
        render(fetched, args.prompt.as_deref(), max_bytes)
    }
}

/// A downloaded response.
struct Fetched {
    url: Url,
    redirects: Vec<String>,
    status: u16,
    content_type: String,
    body: Vec<u8>,
    /// The download stopped at `max_bytes`.
    cut_at_max: bool,
}

/// What a response body is, from its declared type (and its bytes when the type says little).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
    Unknown,
}

fn kind_of(content_type: &str) -> Kind {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    match essence.as_str() {
        "" | "application/octet-stream" | "binary/octet-stream" => Kind::Unknown,
        "text/html" | "application/xhtml+xml" => Kind::Html,
        t if t.starts_with("text/") => Kind::Text,
        t if t.ends_with("+json") || t.ends_with("+xml") || t.ends_with("+yaml") => Kind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-javascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql"
        | "application/x-ndjson"
        | "application/x-www-form-urlencoded" => Kind::Text,
        _ => Kind::Binary,
    }
}

/// An undeclared body by its bytes: text when it is UTF-8 (a cut last char allowed) without NULs.
fn sniff(body: &[u8]) -> Kind {
    let head = &body[..body.len().min(8000)];
    let utf8 = match std::str::from_utf8(body) {
        Ok(_) => true,
        Err(err) => err.error_len().is_none(),
    };
    if !utf8 || memchr::memchr(0, head).is_some() {
        return Kind::Binary;
    }
    let start = String::from_utf8_lossy(&head[..head.len().min(512)]).trim_start().to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") { Kind::Html } else { Kind::Text }
}

async fn fetch(raw: &str, max_bytes: u64, access: &Access) -> Result<Fetched, ToolError> {
    let mut url = check_url(raw)?;
    let mut redirects = Vec::new();
    loop {
        let addr = resolve(&url, access).await?;
        let mut builder = client_builder().no_proxy();
        if let Some(url::Host::Domain(domain)) = url.host() {
            // Connect to the address that was checked, not to whatever DNS says next.
            builder = builder.resolve(domain, addr);
        }
        let client = builder.build().map_err(|err| ToolError::new(format!("could not set up HTTP: {err}")))?;
        let response = client
            .get(url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5",
            )
            .send()
            .await
            .map_err(|err| http_error(&format!("fetching {url}"), &err))?;
        let status = response.status();
        if status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
            let location = response.headers().get(LOCATION).and_then(|l| l.to_str().ok()).ok_or_else(|| {
                ToolError::new(format!("{url} answered {status} without a usable Location header; nothing to follow"))
            })?;
            if redirects.len() >= MAX_REDIRECTS {
                return Err(ToolError::new(format!(
                    "{} redirected more than {MAX_REDIRECTS} times (last to {location}); fetch the final URL directly if you know it",
                    raw.trim()
                ))
                .with("redirects", redirects));
            }
            let next = url.join(location).map_err(|err| {
                ToolError::new(format!("{url} redirected to `{location}`, which is not a valid URL ({err})"))
            })?;
            let next = check_url(next.as_str()).map_err(|err| {
                ToolError::new(format!("{url} redirected to {next}, which was not followed: {}", err.message))
            })?;
            redirects.push(url.to_string());
            url = next;
            continue;
        }
        let content_type =
            response.headers().get(CONTENT_TYPE).and_then(|t| t.to_str().ok()).unwrap_or_default().to_owned();
        let declared_len: Option<u64> =
            response.headers().get(CONTENT_LENGTH).and_then(|l| l.to_str().ok()).and_then(|l| l.parse().ok());
        if status.is_success() && kind_of(&content_type) == Kind::Binary {
            let length = declared_len.map_or_else(|| "size unknown".to_owned(), size);
            return Err(ToolError::new(format!(
                "{url} is binary content ({content_type}, {length}); webfetch returns text and HTML only. \
                 To work with the file, download it with `bash` (curl -L -o) if the person agrees"
            ))
            .with("binary", true)
            .with("contentType", content_type));
        }
        let mut response = response;
        let mut body = Vec::new();
        let mut cut_at_max = false;
        while let Some(chunk) = response.chunk().await.map_err(|err| http_error(&format!("reading {url}"), &err))? {
            let room = (max_bytes as usize).saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                cut_at_max = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(Fetched { url, redirects, status: status.as_u16(), content_type, body, cut_at_max });
    }
}

/// The page title from `<title>`, as plain text.
fn html_title(html: &str) -> Option<String> {
    let lower = html.get(..html.len().min(64 * 1024))?.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let title = plain_text(&html[open_end..close]);
    (!title.is_empty()).then_some(title)
}

/// The page's `<main>` element when it has one (what the page says is its content: menus,
/// sidebars and dialogs around it are left out), else the whole page.
fn main_content(html: &str) -> &str {
    let lower = html.to_ascii_lowercase();
    let open = lower
        .match_indices("<main")
        .find(|(at, _)| lower[at + 5..].starts_with(|c: char| c == '>' || c.is_ascii_whitespace()));
    let Some((open, _)) = open else { return html };
    let Some(close) = lower.rfind("</main>") else { return html };
    match lower[open..].find('>') {
        Some(end) if open + end < close => &html[open + end + 1..close],
        _ => html,
    }
}

/// HTML as Markdown: the `<main>` element when there is one; scripts, styles, the document head
/// and navigation menus left out.
pub(crate) fn html_to_markdown(html: &str) -> Result<String, ToolError> {
    let html = main_content(html);
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["head", "script", "style", "noscript", "template", "svg", "canvas", "iframe", "nav", "button"])
        .build();
    let markdown = converter
        .convert(html)
        .map_err(|err| ToolError::new(format!("could not convert the HTML to Markdown: {err}")))?;
    // Collapse the runs of blank lines that layout markup leaves behind.
    let mut out = String::with_capacity(markdown.len());
    let mut blank = 0;
    for line in markdown.lines() {
        let line = line.trim_end();
        blank = if line.is_empty() { blank + 1 } else { 0 };
        if blank <= 1 {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out.trim().to_owned())
}

fn render(fetched: Fetched, prompt: Option<&str>, max_bytes: u64) -> Result<ToolOutput, ToolError> {
    let Fetched { url, redirects, status, content_type, body, cut_at_max } = fetched;
    let kind = match kind_of(&content_type) {
        Kind::Unknown => sniff(&body),
        kind => kind,
    };
    if kind == Kind::Binary {
        return Err(ToolError::new(format!(
            "{url} is binary content ({}, {}); webfetch returns text and HTML only",
            if content_type.is_empty() { "no declared type" } else { &content_type },
            size(body.len() as u64)
        ))
        .with("binary", true));
    }
    let text = String::from_utf8_lossy(&body);
    let (title, content) = match kind {
        Kind::Html => (html_title(&text), html_to_markdown(&text)?),
        _ => (None, text.trim().to_owned()),
    };
    if !(200..300).contains(&status) {
        let reason = reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
        let advice = match status {
            401 | 403 => {
                "the page needs a login or refuses automated clients; webfetch sends no credentials. Look for another source"
            }
            404 | 410 => "the page does not exist; check the URL, or find the right one with `websearch`",
            429 => "the server is rate-limiting; wait before trying again, or use another source",
            500..=599 => "the server failed; try again later",
            _ => "the server did not return the page",
        };
        let excerpt = cut(&content, 1000);
        return Err(ToolError::new(format!(
            "{url} answered HTTP {status} {reason}: {advice}.{}",
            if excerpt.is_empty() { String::new() } else { format!("\nThe response said:\n{excerpt}") }
        ))
        .with("status", status));
    }
    let total = content.len();
    let shown = cut(&content, MAX_OUTPUT_BYTES);
    let mut output = format!("URL: {url}\n");
    if !redirects.is_empty() {
        output.push_str(&format!("Redirected from: {}\n", redirects.join(" → ")));
    }
    if let Some(title) = &title {
        output.push_str(&format!("Title: {title}\n"));
    }
    let shape = match kind {
        Kind::Html => "HTML converted to Markdown",
        _ => "as served",
    };
    let declared = if content_type.is_empty() { "undeclared type" } else { content_type.as_str() };
    output.push_str(&format!("Content: {declared}, {}, {shape}\n", size(body.len() as u64)));
    if let Some(prompt) = prompt.map(str::trim).filter(|p| !p.is_empty()) {
        output.push_str(&format!("Prompt: {prompt}\n(Answer it from the content below.)\n"));
    }
    output.push_str("\n---\n\n");
    output.push_str(shown);
    output.push('\n');
    if shown.len() < total {
        output.push_str(&format!(
            "\n[Truncated: showing the first {} of {} of content. For a specific part, fetch a more specific URL \
             (a section or anchor of the page, a raw file); to search the whole page, save it with `bash` \
             (curl -L -o page.html URL) and use `grep` or `read` with an offset.]\n",
            size(shown.len() as u64),
            size(total as u64)
        ));
    }
    if cut_at_max {
        output.push_str(&format!(
            "\n[The download stopped at max_bytes ({}); pass a larger max_bytes (up to 50 MB) for the rest.]\n",
            size(max_bytes)
        ));
    }
    let title_line = title.clone().unwrap_or_else(|| url.to_string());
    Ok(ToolOutput::new(title_line, output)
        .with("url", url.to_string())
        .with("status", status)
        .with("contentType", content_type)
        .with("bytes", body.len())
        .with("redirects", redirects.len())
        .with("truncated", shown.len() < total || cut_at_max))
}

#[cfg(test)]
mod tests;
