//! What a message from the client is, decided once from its parsed body.

use serde_json::{Map, Value};

use super::RpcError;

/// One message from the client.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A request: answer it with the same `id`.
    Request { id: Value, method: String, params: Value },
    /// A notification: no answer.
    Notification { method: String, params: Value },
    /// A response to one of our requests (the whole message, for [`super::Connection::resolve`]).
    Response(Value),
    /// Not a JSON-RPC 2.0 message. `reply_to` is the id to answer with `error` (`Value::Null`
    /// when the id cannot be known); `None` when nothing may be answered (a notification).
    Invalid { reply_to: Option<Value>, error: RpcError },
}

impl Incoming {
    /// Classifies a parsed body. Missing `params` are `Value::Null`.
    pub fn classify(message: Value) -> Self {
        let Value::Object(mut message) = message else {
            let why = if message.is_array() { "batches are not supported" } else { "a message must be an object" };
            return invalid(Some(Value::Null), why);
        };
        let id = message.remove("id");
        if let Some(bad) = id.as_ref().filter(|id| !(id.is_i64() || id.is_u64() || id.is_string())) {
            // Only a number or a string can be echoed back as a request's id; a null id is
            // allowed on an error response only.
            let error_response = bad.is_null() && !message.contains_key("method") && is_outcome(&message);
            if !error_response {
                return invalid(Some(Value::Null), "`id` must be an integer or a string");
            }
        }
        if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return invalid(id, "not JSON-RPC 2.0: a message must carry \"jsonrpc\": \"2.0\"");
        }
        match message.remove("method") {
            Some(Value::String(method)) => {
                let params = message.remove("params").unwrap_or(Value::Null);
                match id {
                    Some(id) => Self::Request { id, method, params },
                    None => Self::Notification { method, params },
                }
            }
            Some(_) => invalid(id, "`method` must be a string"),
            None => match id {
                Some(id) if is_outcome(&message) => {
                    message.insert("id".to_owned(), id);
                    Self::Response(Value::Object(message))
                }
                id => invalid(Some(id.unwrap_or(Value::Null)), "neither a request, a notification nor a response"),
            },
        }
    }
}

/// Whether a message without a method carries a response's outcome.
fn is_outcome(message: &Map<String, Value>) -> bool {
    message.contains_key("result") || message.contains_key("error")
}

fn invalid(reply_to: Option<Value>, why: &str) -> Incoming {
    Incoming::Invalid { reply_to, error: RpcError::new(RpcError::INVALID_REQUEST, why) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reply_of(message: Value) -> Option<Option<Value>> {
        match Incoming::classify(message) {
            Incoming::Invalid { reply_to, error } => {
                assert_eq!(error.code, RpcError::INVALID_REQUEST);
                Some(reply_to)
            }
            _ => None,
        }
    }

    #[test]
    fn well_formed_messages_are_classified() {
        let request = Incoming::classify(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {} }));
        assert_eq!(request, Incoming::Request { id: json!(1), method: "initialize".into(), params: json!({}) });
        let notification = Incoming::classify(json!({ "jsonrpc": "2.0", "method": "exit" }));
        assert_eq!(notification, Incoming::Notification { method: "exit".into(), params: Value::Null });
        let response = json!({ "jsonrpc": "2.0", "id": "a", "result": null });
        assert_eq!(Incoming::classify(response.clone()), Incoming::Response(response));
        let error = json!({ "jsonrpc": "2.0", "id": 3, "error": { "code": -1, "message": "x" } });
        assert_eq!(Incoming::classify(error.clone()), Incoming::Response(error));
    }

    #[test]
    fn invalid_messages_are_answered_when_they_carry_a_usable_id() {
        assert_eq!(reply_of(json!([1, 2])), Some(Some(Value::Null)));
        assert_eq!(reply_of(json!({ "jsonrpc": "1.0", "id": 4, "method": "x" })), Some(Some(json!(4))));
        assert_eq!(reply_of(json!({ "jsonrpc": "2.0", "id": 5, "method": 7 })), Some(Some(json!(5))));
        assert_eq!(reply_of(json!({ "jsonrpc": "2.0", "id": 1.5, "method": "x" })), Some(Some(Value::Null)));
        assert_eq!(reply_of(json!({ "jsonrpc": "2.0", "id": 6 })), Some(Some(json!(6))));
        // A notification is never answered.
        assert_eq!(reply_of(json!({ "jsonrpc": "1.0", "method": "x" })), Some(None));
        assert_eq!(reply_of(json!({ "jsonrpc": "2.0", "method": 7 })), Some(None));
    }
}
