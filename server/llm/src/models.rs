//! The provider's list of models, for a model picker: OpenAI-compatible `GET {base}/models`
//! (`data[].id`), Anthropic's `GET {base}/models` (`data[].id`, `display_name`), and, for
//! Ollama, `GET /api/tags` (`models[].name`) when its OpenAI-compatible list is not there.

use serde_json::Value;
use tokio::time::timeout;

use crate::client::Client;
use crate::{ErrorKind, LlmError, ProviderKind};

/// At most this much of a model list is read.
const LIST_LIMIT: usize = 4 * 1024 * 1024;

/// A model the provider offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// The id to send in requests.
    pub id: String,
    /// A name for people, where the provider gives one.
    pub name: Option<String>,
}

impl Client {
    /// The models the provider offers, in its order (Ollama's by name). Errors are written for
    /// the person, like a turn's.
    pub async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let settings = self.settings();
        let base = settings.base_url.trim_end_matches('/');
        match self.get_json(&format!("{base}/models")).await {
            Ok(body) => parse(&body, settings.kind),
            Err(err) if is_ollama(base) => {
                let root = base.strip_suffix("/v1").unwrap_or(base);
                match self.get_json(&format!("{root}/api/tags")).await {
                    Ok(body) => parse_ollama(&body),
                    Err(_) => Err(err),
                }
            }
            Err(err) => Err(err),
        }
    }

    async fn get_json(&self, url: &str) -> Result<Value, LlmError> {
        let settings = self.settings();
        let request = self.authorize(self.http()?.get(url));
        let failed = |kind: ErrorKind, what: String| LlmError {
            kind,
            message: format!("could not list the models at {url}: {what}"),
        };
        let mut response = match timeout(settings.timeouts.stall, request.send()).await {
            Err(_) => {
                return Err(failed(ErrorKind::Stalled, format!("no answer within {:?}", settings.timeouts.stall)));
            }
            Ok(Err(error)) => return Err(failed(ErrorKind::Unreachable, error.to_string())),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        let mut body = Vec::new();
        while body.len() < LIST_LIMIT {
            match timeout(settings.timeouts.stall, response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                Ok(Ok(None) | Err(_)) | Err(_) => break,
            }
        }
        if !status.is_success() {
            let kind = if matches!(status.as_u16(), 401 | 403) { ErrorKind::Auth } else { ErrorKind::Rejected };
            let key = settings.api_key_env.as_deref().map(|env| format!(" (key from ${env})")).unwrap_or_default();
            return Err(failed(kind, format!("HTTP {status}{key}")));
        }
        serde_json::from_slice(&body).map_err(|err| failed(ErrorKind::Protocol, format!("not JSON ({err})")))
    }
}

fn is_ollama(base: &str) -> bool {
    base.contains(":11434")
}

/// `{"data": [{"id": …, "display_name": …}]}` (OpenAI, Anthropic, and most compatible servers).
fn parse(body: &Value, kind: ProviderKind) -> Result<Vec<ModelInfo>, LlmError> {
    let Some(data) = body.get("data").and_then(Value::as_array) else {
        return Err(LlmError {
            kind: ErrorKind::Protocol,
            message: format!("the model list has no `data` list ({kind:?} format)"),
        });
    };
    Ok(data
        .iter()
        .filter_map(|model| {
            let id = model.get("id")?.as_str()?.to_owned();
            let name = model.get("display_name").and_then(Value::as_str).map(str::to_owned);
            Some(ModelInfo { id, name })
        })
        .collect())
}

/// Ollama's `{"models": [{"name": "qwen2.5-coder:7b", …}]}`, sorted by name.
fn parse_ollama(body: &Value) -> Result<Vec<ModelInfo>, LlmError> {
    let Some(models) = body.get("models").and_then(Value::as_array) else {
        return Err(LlmError { kind: ErrorKind::Protocol, message: "Ollama's tag list has no `models` list".into() });
    };
    let mut out: Vec<ModelInfo> =
        models.iter().filter_map(|m| Some(ModelInfo { id: m.get("name")?.as_str()?.to_owned(), name: None })).collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_parse_in_each_providers_format() {
        let openai = json!({ "object": "list", "data": [
            { "id": "gpt-4.1", "object": "model", "created": 1, "owned_by": "system" },
            { "id": "gpt-4o-mini", "object": "model", "created": 2, "owned_by": "system" },
        ]});
        let ids: Vec<_> = parse(&openai, ProviderKind::OpenAi).unwrap_or_default().into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["gpt-4.1", "gpt-4o-mini"]);
        let anthropic = json!({ "data": [
            { "type": "model", "id": "claude-sonnet-4-5-20250929", "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z" },
        ], "has_more": false, "first_id": "claude-sonnet-4-5-20250929", "last_id": "claude-sonnet-4-5-20250929" });
        let models = parse(&anthropic, ProviderKind::Anthropic).unwrap_or_default();
        assert_eq!(models[0].name.as_deref(), Some("Claude Sonnet 4.5"));
        let ollama = json!({ "models": [
            { "name": "qwen2.5-coder:7b", "model": "qwen2.5-coder:7b", "size": 4683087332u64 },
            { "name": "llama3.2:latest", "model": "llama3.2:latest", "size": 2019393189u64 },
        ]});
        let ids: Vec<_> = parse_ollama(&ollama).unwrap_or_default().into_iter().map(|m| m.id).collect();
        assert_eq!(ids, ["llama3.2:latest", "qwen2.5-coder:7b"]);
        assert!(parse(&json!({ "error": "nope" }), ProviderKind::OpenAi).is_err());
    }
}
