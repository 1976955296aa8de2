//! The web tools: `webfetch` (one page, as Markdown) and `websearch` (a configured search API).
//! What they share: the HTTP client set-up, the settings, and text helpers for HTML fragments.

mod guard;
mod webfetch;
mod websearch;

use std::sync::Arc;
use std::time::Duration;

pub use tandem_tool_api::WebConfig;
use tandem_tool_api::{Tool, ToolError, typed};

/// The web tools under `config`. Search backends are read from the environment at each call.
pub fn all(config: &WebConfig) -> Vec<Arc<dyn Tool>> {
    vec![
        typed(webfetch::WebFetch::new(guard::Access { allow_private: config.allow_private, exceptions: Vec::new() })),
        typed(websearch::WebSearch::from_process_env()),
    ]
}

/// Overall time limit of one web request (all redirects included).
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// `User-Agent` of the web tools.
const USER_AGENT: &str = concat!("tandem/", env!("CARGO_PKG_VERSION"), " (coding agent)");

/// A client builder with the process's TLS provider in place, Tandem's user agent, the request
/// timeout, and no redirects followed (callers that follow them re-check each hop).
pub(crate) fn client_builder() -> reqwest::ClientBuilder {
    // reqwest is built without a default crypto provider (ring instead of aws-lc, which needs
    // cmake); install ring unless something else already did. Losing that race is fine.
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        match rustls::crypto::ring::default_provider().install_default() {
            Ok(()) | Err(_) => {}
        }
    }
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
}

/// A reqwest error in words the model can act on.
pub(crate) fn http_error(what: &str, err: &reqwest::Error) -> ToolError {
    let mut cause = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        cause = inner.to_string();
        source = inner.source();
    }
    if err.is_timeout() {
        ToolError::new(format!(
            "{what} timed out after {} s; the server may be slow or down: try again later or use another source",
            REQUEST_TIMEOUT.as_secs()
        ))
        .with("timeout", true)
    } else if err.is_connect() {
        ToolError::new(format!("{what} failed: could not connect ({cause}); check the address, or try again later"))
    } else {
        ToolError::new(format!("{what} failed: {cause}"))
    }
}

/// `text` cut to at most `max` bytes, at a line end when one is near, on a char boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(line_end) if line_end >= end.saturating_sub(2048) => &text[..line_end],
        _ => &text[..end],
    }
}

/// Text of an HTML fragment: tags dropped, the common entities decoded, whitespace collapsed.
/// For titles and search snippets, not for pages (those go through the Markdown converter).
pub(crate) fn plain_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let decoded = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A byte count for people.
pub(crate) fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
pub(crate) mod test_server;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_whole_lines_and_chars() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("line one\nline two\nline three", 20), "line one\nline two");
        assert_eq!(cut("ééééé", 5), "éé");
        assert_eq!(cut(&"x".repeat(5000), 3000).len(), 3000);
    }

    #[test]
    fn plain_text_of_fragments() {
        assert_eq!(
            plain_text("The <strong>Rust</strong> &amp; <em>Cargo</em>\n  book &#39;21&#39; &lt;3"),
            "The Rust & Cargo book '21' <3"
        );
    }
}
