//! Builds the assistant message from streamed pieces, reporting each piece as an [`Event`].

use serde_json::{Map, Value};

use crate::{Event, Message, Part, ReasoningField, Role, StopReason, Usage};

/// The assistant message so far. Both wire formats feed it.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    parts: Vec<Part>,
    pub usage: Usage,
    pub stop: Option<StopReason>,
}

impl Assembler {
    /// Appends answer text, merged into the last part when that is text.
    pub fn text(&mut self, text: &str, on_event: &mut dyn FnMut(Event)) {
        if text.is_empty() {
            return;
        }
        on_event(Event::TextDelta(text.to_owned()));
        match self.parts.last_mut() {
            Some(Part::Text { text: last }) => last.push_str(text),
            _ => self.parts.push(Part::Text { text: text.to_owned() }),
        }
    }

    /// Starts a new thinking part (Anthropic: one per block, each with its own signature).
    pub fn start_thinking(&mut self) {
        self.parts.push(Part::Thinking { text: String::new(), signature: None, field: None });
    }

    /// Appends reasoning, merged into the last part when that is thinking.
    pub fn thinking(&mut self, text: &str, on_event: &mut dyn FnMut(Event)) {
        self.thinking_in(text, None, on_event);
    }

    /// Appends reasoning that came in `field` of an OpenAI-compatible stream, merged into the
    /// last part when that is thinking from the same field.
    pub fn thinking_in(&mut self, text: &str, field: Option<ReasoningField>, on_event: &mut dyn FnMut(Event)) {
        if text.is_empty() {
            return;
        }
        on_event(Event::ThinkingDelta(text.to_owned()));
        match self.parts.last_mut() {
            Some(Part::Thinking { text: last, field: last_field, .. }) if *last_field == field => last.push_str(text),
            _ => self.parts.push(Part::Thinking { text: text.to_owned(), signature: None, field }),
        }
    }

    /// Adds an Anthropic `redacted_thinking` block (nothing to show; kept to send back).
    pub fn redacted_thinking(&mut self, data: &str) {
        self.parts.push(Part::RedactedThinking { data: data.to_owned() });
    }

    /// Adds to the signature of the last thinking part.
    pub fn signature(&mut self, piece: &str) {
        if let Some(Part::Thinking { signature, .. }) =
            self.parts.iter_mut().rev().find(|part| matches!(part, Part::Thinking { .. }))
        {
            signature.get_or_insert_with(String::new).push_str(piece);
        }
    }

    /// Records the start of a tool call; returns the index of its part.
    pub fn start_tool_call(&mut self, id: &str, name: &str, on_event: &mut dyn FnMut(Event)) -> usize {
        on_event(Event::ToolCallStarted { id: id.to_owned(), name: name.to_owned() });
        self.parts.push(Part::ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: Value::Null,
            extra: None,
        });
        self.parts.len() - 1
    }

    /// Attaches the provider's opaque data to the tool call at part `index`.
    pub fn tool_call_extra(&mut self, index: usize, value: Value) {
        if let Some(Part::ToolCall { extra, .. }) = self.parts.get_mut(index) {
            *extra = Some(value);
        }
    }

    /// Completes the tool call at part `index` with its raw argument text.
    pub fn finish_tool_call(&mut self, index: usize, raw_arguments: &str, on_event: &mut dyn FnMut(Event)) {
        if let Some(Part::ToolCall { id, name, arguments, .. }) = self.parts.get_mut(index) {
            *arguments = parse_arguments(raw_arguments);
            on_event(Event::ToolCallReady { id: id.clone(), name: name.clone(), arguments: arguments.clone() });
        }
    }

    /// Whether any tool call was seen.
    pub fn has_tool_calls(&self) -> bool {
        self.parts.iter().any(|part| matches!(part, Part::ToolCall { .. }))
    }

    /// Sets the token counts and reports them.
    pub fn set_usage(&mut self, usage: Usage, on_event: &mut dyn FnMut(Event)) {
        self.usage = usage;
        on_event(Event::Usage(usage));
    }

    /// The finished message; empty thinking parts without a signature are dropped.
    pub fn into_message(self) -> Message {
        let content = self
            .parts
            .into_iter()
            .filter(|part| !matches!(part, Part::Thinking { text, signature: None, .. } if text.is_empty()))
            .collect();
        Message { role: Role::Assistant, content }
    }
}

/// Tool-call arguments as a JSON object: `{}` for none, `{"_raw": text}` for text that is not
/// a JSON object (the model's mistake is the tool layer's to report, not a failed turn).
pub(crate) fn parse_arguments(raw: &str) -> Value {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(map)) => Value::Object(map),
        Ok(Value::Null) => Value::Object(Map::new()),
        Ok(_) | Err(_) => {
            let mut map = Map::new();
            map.insert("_raw".to_owned(), Value::String(raw.to_owned()));
            Value::Object(map)
        }
    }
}

/// The arguments to send back to a provider as a JSON string (the raw text for `_raw`).
pub(crate) fn arguments_text(arguments: &Value) -> String {
    if let Value::Object(map) = arguments
        && map.len() == 1
        && let Some(Value::String(raw)) = map.get("_raw")
    {
        return raw.clone();
    }
    if arguments.is_null() {
        return "{}".to_owned();
    }
    arguments.to_string()
}

/// A temperature as the decimal the caller meant (`0.7f32` would otherwise be sent as
/// `0.699999988079071`).
pub(crate) fn temperature(value: f32) -> Value {
    value.to_string().parse::<f64>().map_or(Value::Null, Value::from)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_parse_leniently() {
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments("  "), json!({}));
        assert_eq!(parse_arguments("null"), json!({}));
        assert_eq!(parse_arguments("{\"a\": 1}"), json!({"a": 1}));
        assert_eq!(parse_arguments("{\"a\": "), json!({"_raw": "{\"a\": "}));
        assert_eq!(parse_arguments("[1]"), json!({"_raw": "[1]"}));
        assert_eq!(arguments_text(&json!({"_raw": "{\"a\": "})), "{\"a\": ");
        assert_eq!(arguments_text(&json!({"a": 1})), "{\"a\":1}");
        assert_eq!(temperature(0.7), json!(0.7));
    }

    #[test]
    fn text_merges_and_thinking_splits_by_block() {
        let mut events = Vec::new();
        let mut on_event = |event| events.push(event);
        let mut asm = Assembler::default();
        asm.thinking("a", &mut on_event);
        asm.start_thinking();
        asm.thinking("b", &mut on_event);
        asm.signature("s");
        asm.text("x", &mut on_event);
        asm.text("", &mut on_event);
        asm.text("y", &mut on_event);
        let index = asm.start_tool_call("c1", "read", &mut on_event);
        asm.finish_tool_call(index, "{}", &mut on_event);
        assert_eq!(
            asm.into_message().content,
            vec![
                Part::Thinking { text: "a".into(), signature: None, field: None },
                Part::Thinking { text: "b".into(), signature: Some("s".into()), field: None },
                Part::Text { text: "xy".into() },
                Part::ToolCall { id: "c1".into(), name: "read".into(), arguments: json!({}), extra: None },
            ]
        );
        assert_eq!(events.len(), 6);
    }
}
