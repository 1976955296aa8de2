//! Our session types ↔ ACP v1 JSON. `tandem-protocol`'s session types already have ACP's
//! shapes; what differs is mapped here: hunk ids travel in `_meta` (`_tandem/hunks`,
//! `_tandem/acceptedHunks`), `usage_update` carries ACP's `used`/`size`, modes and the model
//! are also config options, and stop reasons use ACP's names.

use serde_json::{Map, Value, json};
use tandem_agent::ClientError;
use tandem_protocol::{
    ContentBlock, DiagnosticsPreview, ModeId, PermissionOutcome, PreviewSeverity, RequestPermissionParams,
    RequestPermissionResult, SessionModes, SessionUpdate, StopReason,
};

/// The ACP protocol version we speak.
pub const PROTOCOL_VERSION: u64 = 1;

/// `_meta` key of a diff's hunks in a permission request.
pub const META_HUNKS: &str = "_tandem/hunks";
/// `_meta` key of the hunks a client accepted (absent: all).
pub const META_ACCEPTED_HUNKS: &str = "_tandem/acceptedHunks";
/// `_meta` key of a permission request's diagnostics preview (`DiagnosticsPreview`).
pub const META_DIAGNOSTICS: &str = "_tandem/diagnostics";
/// `_meta` key of words for the model with a rejection.
pub const META_MESSAGE: &str = "_tandem/message";

/// Moves `hunks` of every diff in `content` into `_meta`, where ACP allows extensions.
fn hunks_to_meta(content: &mut Value) {
    let Some(items) = content.as_array_mut() else { return };
    for item in items {
        let Some(object) = item.as_object_mut() else { continue };
        if let Some(hunks) = object.remove("hunks") {
            object.insert("_meta".into(), json!({ META_HUNKS: hunks }));
        }
    }
}

/// A `session/update` notification's `update`.
pub fn update(update: &SessionUpdate) -> Value {
    if let SessionUpdate::UsageUpdate(usage) = update {
        let mut value = json!({
            "sessionUpdate": "usage_update",
            "used": usage.input_tokens + usage.output_tokens,
            // The model's window (from Tandem's model table or `[provider] context_window`).
            "size": usage.context_window.max(usage.input_tokens + usage.output_tokens),
            "_meta": { "_tandem/usage": usage },
        });
        // The session's estimated cost so far, where the model's price is known.
        if let Some(amount) = usage.session.cost_usd {
            value["cost"] = json!({ "amount": amount, "currency": "USD" });
        }
        return value;
    }
    let mut value = serde_json::to_value(update).unwrap_or(Value::Null);
    if let Some(content) = value.get_mut("content") {
        hunks_to_meta(content);
    }
    // ACP's tool call has no field for the tool's name: it travels under `_meta`.
    if let Some(object) = value.as_object_mut()
        && let Some(name) = object.remove("toolName")
    {
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(META_TOOL_NAME.into(), name);
        }
    }
    value
}

/// `_meta` key of a tool call's tool name.
pub const META_TOOL_NAME: &str = "_tandem/toolName";

/// `session/request_permission` params: hunks and the diagnostics preview under `_meta`, the
/// preview also as text in the tool call's content, for clients that show only that.
pub fn permission_request(params: &RequestPermissionParams) -> Value {
    let mut value = serde_json::to_value(params).unwrap_or(Value::Null);
    if let Some(content) = value.pointer_mut("/toolCall/content") {
        hunks_to_meta(content);
    }
    if let Some(object) = value.as_object_mut()
        && let Some(preview) = object.remove("diagnostics")
    {
        object.insert("_meta".into(), json!({ META_DIAGNOSTICS: preview }));
    }
    if let (Some(preview), Some(Value::Array(content))) = (&params.diagnostics, value.pointer_mut("/toolCall/content"))
    {
        let text = ContentBlock::text(preview_text(preview));
        content.push(json!({ "type": "content", "content": text }));
    }
    value
}

/// A diagnostics preview as text: the summary, then each file's new and resolved problems.
fn preview_text(preview: &DiagnosticsPreview) -> String {
    let mut text = format!("Diagnostics: {}", preview.summary);
    for file in &preview.files {
        let listed = file.introduced.iter().map(|d| ("new", d)).chain(file.resolved.iter().map(|d| ("resolved", d)));
        for (what, d) in listed {
            let severity = match d.severity {
                PreviewSeverity::Error => "error",
                PreviewSeverity::Warning => "warning",
            };
            let hunk = d.hunk.as_deref().map(|h| format!(" [{h}]")).unwrap_or_default();
            let message = d.message.lines().next().unwrap_or_default();
            text.push_str(&format!("\n  {what} {severity}: {}:{}:{}: {message}{hunk}", file.path, d.line, d.column));
        }
    }
    text
}

fn meta_of<'a>(values: [Option<&'a Value>; 2], key: &str) -> Option<&'a Value> {
    values.into_iter().flatten().filter_map(|v| v.get("_meta")).find_map(|meta| meta.get(key))
}

/// The client's answer to `session/request_permission`.
pub fn permission_result(result: &Value) -> Result<RequestPermissionResult, ClientError> {
    let outcome = result.get("outcome").ok_or_else(|| invalid("the permission answer has no `outcome`"))?;
    match outcome.get("outcome").and_then(Value::as_str) {
        Some("cancelled") => Ok(RequestPermissionResult { outcome: PermissionOutcome::Cancelled }),
        Some("selected") => {
            let option_id = outcome
                .get("optionId")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid("the permission answer selects no `optionId`"))?
                .to_owned();
            let accepted_hunks = match meta_of([Some(outcome), Some(result)], META_ACCEPTED_HUNKS) {
                None | Some(Value::Null) => None,
                Some(value) => Some(
                    serde_json::from_value::<Vec<String>>(value.clone())
                        .map_err(|_| invalid(format!("`{META_ACCEPTED_HUNKS}` must be a list of hunk ids")))?,
                ),
            };
            let message =
                meta_of([Some(outcome), Some(result)], META_MESSAGE).and_then(Value::as_str).map(str::to_owned);
            Ok(RequestPermissionResult { outcome: PermissionOutcome::Selected { option_id, accepted_hunks, message } })
        }
        other => Err(invalid(format!("unknown permission outcome {other:?}: expected `selected` or `cancelled`"))),
    }
}

/// An answer that does not say what was decided.
fn invalid(why: impl Into<String>) -> ClientError {
    ClientError::InvalidAnswer(why.into())
}

/// ACP's `SessionModeState`.
pub fn modes(modes: &SessionModes) -> Value {
    json!({
        "currentModeId": modes.current,
        "availableModes": modes.available.iter().map(|m| json!({ "id": m.id, "name": m.name, "description": m.description })).collect::<Vec<_>>(),
    })
}

/// The session's config options: the mode (category `mode`) and the model (category `model`,
/// with the provider's models once they were read).
pub fn config_options(mode: ModeId, model: &str, agent: &tandem_agent::Agent) -> Value {
    let options = tandem_agent::config_options(mode, model, &agent.default_model(), &agent.known_models());
    serde_json::to_value(options).unwrap_or(Value::Null)
}

/// A prompt's content blocks: text, images, resource links and embedded text resources.
pub fn prompt(blocks: &Value) -> Result<Vec<ContentBlock>, String> {
    let items = blocks.as_array().ok_or("`prompt` must be a list of content blocks")?;
    let mut prompt = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "audio" => {
                return Err(format!(
                    "`prompt[{i}]` is {kind} content, which this agent does not take (promptCapabilities.{kind} is false)"
                ));
            }
            "resource" if item.pointer("/resource/blob").is_some() => {
                return Err(format!(
                    "`prompt[{i}]` embeds a binary resource; attach it as a resource_link or as text instead"
                ));
            }
            _ => {}
        }
        let block: ContentBlock =
            serde_json::from_value(item.clone()).map_err(|err| format!("`prompt[{i}]` ({kind}): {err}"))?;
        prompt.push(block);
    }
    if prompt.is_empty() {
        return Err("the prompt is empty".to_owned());
    }
    Ok(prompt)
}

/// ACP's stop reason for ours (`Error` is answered as a JSON-RPC error instead).
pub fn stop_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::EndTurn | StopReason::Error => "end_turn",
        StopReason::Cancelled => "cancelled",
        StopReason::MaxTurns => "max_turn_requests",
        StopReason::Refusal => "refusal",
        StopReason::MaxTokens => "max_tokens",
    }
}

/// `params[key]` as a string, or a clear error.
pub fn string_param<'a>(params: &'a Value, key: &str) -> Result<&'a str, String> {
    match params.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
        None => Err(format!("`{key}` is missing")),
    }
}

/// A message's params as an object (`{}` when absent or not an object).
pub fn object_or_empty(params: Value) -> Value {
    match params {
        Value::Object(map) => Value::Object(map),
        _ => Value::Object(Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_protocol::{HunkInfo, ToolCallContent, ToolCallUpdate, Usage};

    #[test]
    fn hunks_move_to_meta_and_usage_gets_acp_fields() {
        let update = SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id: "c1".into(),
            content: Some(vec![ToolCallContent::Diff {
                path: "/w/a.txt".into(),
                old_text: Some("a\n".into()),
                new_text: "b\n".into(),
                hunks: vec![HunkInfo {
                    id: "h1".into(),
                    old_start: 1,
                    old_lines: 1,
                    new_start: 1,
                    new_lines: 1,
                    patch: "@@ -1 +1 @@\n-a\n+b\n".into(),
                    fuzz: None,
                }],
            }]),
            ..Default::default()
        });
        let value = super::update(&update);
        assert_eq!(value["content"][0]["type"], "diff");
        assert!(value["content"][0].get("hunks").is_none());
        assert_eq!(value["content"][0]["_meta"][META_HUNKS][0]["id"], "h1");
        let usage = super::update(&SessionUpdate::UsageUpdate(Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_read_tokens: 0,
            total_tokens: 15,
            context_window: 8_192,
            ..Default::default()
        }));
        assert_eq!((usage["used"].as_u64(), usage["sessionUpdate"].as_str()), (Some(15), Some("usage_update")));
        assert_eq!(usage["size"].as_u64(), Some(8_192));
    }

    #[test]
    fn a_diagnostics_preview_goes_under_meta_and_into_the_content_as_text() {
        use tandem_protocol::{FileDiagnosticsPreview, PreviewDiagnostic, PreviewStatus};
        let preview = DiagnosticsPreview {
            status: PreviewStatus::Ready,
            summary: "introduces 1 error: a.py:2: bad".into(),
            files: vec![FileDiagnosticsPreview {
                path: "/w/a.py".into(),
                changed: true,
                server: Some("pyright".into()),
                status: PreviewStatus::Ready,
                reason: None,
                introduced: vec![PreviewDiagnostic {
                    severity: PreviewSeverity::Error,
                    message: "bad".into(),
                    line: 2,
                    column: 5,
                    end_line: 2,
                    end_column: 8,
                    code: None,
                    source: None,
                    hunk: Some("h1".into()),
                }],
                resolved: Vec::new(),
            }],
        };
        let params = RequestPermissionParams {
            session_id: "s".into(),
            tool_call: ToolCallUpdate { tool_call_id: "c1".into(), content: Some(Vec::new()), ..Default::default() },
            options: Vec::new(),
            diagnostics: Some(preview),
        };
        let value = permission_request(&params);
        assert!(value.get("diagnostics").is_none(), "{value:#}");
        assert_eq!(value["_meta"][META_DIAGNOSTICS]["files"][0]["introduced"][0]["hunk"], "h1");
        let text = value["toolCall"]["content"][0]["content"]["text"].as_str().unwrap_or_default();
        assert_eq!(text, "Diagnostics: introduces 1 error: a.py:2: bad\n  new error: /w/a.py:2:5: bad [h1]");
        // Without a preview, nothing is added.
        let plain = permission_request(&RequestPermissionParams { diagnostics: None, ..params });
        assert!(plain.get("_meta").is_none() && plain["toolCall"]["content"] == json!([]), "{plain:#}");
    }

    #[test]
    fn permission_answers_parse_with_and_without_hunks() {
        let plain = permission_result(&json!({ "outcome": { "outcome": "selected", "optionId": "allow_once" } }));
        assert_eq!(
            plain.map(|r| r.outcome),
            Ok(PermissionOutcome::Selected { option_id: "allow_once".into(), accepted_hunks: None, message: None })
        );
        let subset = permission_result(&json!({ "outcome": { "outcome": "selected", "optionId": "allow_once",
            "_meta": { META_ACCEPTED_HUNKS: ["h2"] } } }));
        assert_eq!(
            subset.map(|r| r.outcome),
            Ok(PermissionOutcome::Selected {
                option_id: "allow_once".into(),
                accepted_hunks: Some(vec!["h2".into()]),
                message: None
            })
        );
        assert!(permission_result(&json!({ "outcome": { "outcome": "maybe" } })).is_err());
        assert!(permission_result(&json!({})).is_err());
    }

    #[test]
    fn prompts_refuse_what_was_not_offered() {
        assert!(prompt(&json!([{ "type": "audio", "data": "", "mimeType": "audio/wav" }])).is_err());
        // Images are taken (whether the model sees them is the agent's decision, which names it).
        assert!(matches!(
            prompt(&json!([{ "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png" }])).as_deref(),
            Ok([ContentBlock::Image { .. }])
        ));
        assert!(prompt(&json!([])).is_err());
        let ok = prompt(&json!([
            { "type": "text", "text": "hi" },
            { "type": "resource_link", "uri": "file:///w/a.rs", "name": "a.rs", "size": 3 },
            { "type": "resource", "resource": { "uri": "file:///w/b.rs", "text": "fn b() {}", "mimeType": "text/x-rust" } },
        ]));
        assert_eq!(ok.map(|p| p.len()), Ok(3));
    }
}
