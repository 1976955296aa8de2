//! Messages already written as JSON, remembered by identity, so a request writes only what is
//! new since the last one.
//!
//! Every request carries the whole conversation. Written afresh each time, a long session spends
//! most of the time between a tool result and the next request escaping the same text again
//! (half a megabyte of history took 3 ms a request). A [`Request`](crate::Request) shares its
//! messages with the caller's history as `Arc<Message>`s, so a message seen before is the same
//! allocation: the cache keys each one's JSON by that allocation and holds a [`Weak`] to it.
//!
//! Why a remembered text is never stale: a message cannot change while it is shared. Its
//! allocation holds the data read-only (`Arc::get_mut` refuses while our `Weak` exists, and
//! `Arc::make_mut` then copies to a new allocation), and the address cannot be reused for
//! another message while our `Weak` keeps the allocation. A message dropped from the history
//! (compaction, a new session) is forgotten at the next sweep.
//!
//! The body buffer is recycled too: a fresh buffer the size of the history costs a page fault
//! per 4 KiB on every request, more than copying the remembered text into a warm one.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use bytes::Bytes;

use crate::Message;

/// JSON kept at most, in bytes: beyond it messages are written afresh each time (correct, only
/// slower), so the cache never grows past a bound whatever the history.
const LIMIT: usize = 64 * 1024 * 1024;

/// The JSON of messages of earlier requests, for one wire format.
#[derive(Default)]
pub(crate) struct EncodeCache {
    entries: HashMap<usize, Entry>,
    bytes: usize,
    /// The buffer of a body already sent, for the next one.
    spare: Option<Vec<u8>>,
}

struct Entry {
    /// Keeps the allocation, hence the key, from being reused by another message.
    message: Weak<Message>,
    json: Box<[u8]>,
}

impl std::fmt::Debug for EncodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncodeCache").field("messages", &self.entries.len()).field("bytes", &self.bytes).finish()
    }
}

impl EncodeCache {
    /// Appends the JSON of `message` to `out` as `encode` writes it: the text remembered from
    /// an earlier request for this very message, else written now (and remembered).
    pub(crate) fn write(
        &mut self,
        message: &Arc<Message>,
        out: &mut Vec<u8>,
        encode: impl FnOnce(&Message, &mut Vec<u8>),
    ) {
        let key = Arc::as_ptr(message) as usize;
        if let Some(entry) = self.entries.get(&key) {
            out.extend_from_slice(&entry.json);
            return;
        }
        let start = out.len();
        encode(message, out);
        let json = &out[start..];
        if self.bytes + json.len() <= LIMIT {
            self.bytes += json.len();
            self.entries.insert(key, Entry { message: Arc::downgrade(message), json: json.into() });
        }
    }

    /// An empty buffer for a body: the last body's when it came back, big enough for the
    /// history remembered here.
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        let mut buffer = self.spare.take().unwrap_or_default();
        buffer.clear();
        buffer.reserve(self.bytes + 64 * 1024);
        buffer
    }

    /// Takes back the buffer of a body that was sent, when nothing else holds it any more.
    pub(crate) fn recycle(&mut self, body: Bytes) {
        if let Ok(body) = body.try_into_mut() {
            let buffer = Vec::from(body);
            // Only a buffer worth keeping: no bigger than what the history may need again.
            if buffer.capacity() <= (self.bytes + 64 * 1024) * 2 {
                self.spare = Some(buffer);
            }
        }
    }

    /// Forgets the messages no history holds any more.
    pub(crate) fn sweep(&mut self) {
        let bytes = &mut self.bytes;
        self.entries.retain(|_, entry| {
            let alive = entry.message.strong_count() > 0;
            if !alive {
                *bytes -= entry.json.len();
            }
            alive
        });
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// A request body being written: `head`'s fields, then a `messages` array whose items each
/// format adds one by one (remembered ones through the cache), then the closing brackets.
pub(crate) struct BodyWriter<'c> {
    cache: &'c mut EncodeCache,
    out: Vec<u8>,
    first: bool,
}

impl<'c> BodyWriter<'c> {
    /// Writes `head` as a JSON object left open, then `"messages":[`, into a recycled buffer.
    pub(crate) fn open(cache: &'c mut EncodeCache, head: &impl serde::Serialize) -> Self {
        let mut out = cache.buffer();
        // Borrowed strings and JSON values: writing them cannot fail.
        let _ = serde_json::to_writer(&mut out, head);
        if out.last() == Some(&b'}') {
            out.pop();
        }
        if out.last() != Some(&b'{') {
            out.push(b',');
        }
        out.extend_from_slice(b"\"messages\":[");
        Self { cache, out, first: true }
    }

    /// Adds the items `write` writes (none, one, or several comma-separated): a comma goes
    /// before them only when they are not empty.
    pub(crate) fn item(&mut self, write: impl FnOnce(&mut EncodeCache, &mut Vec<u8>)) {
        let mark = self.out.len();
        if !self.first {
            self.out.push(b',');
        }
        let before = self.out.len();
        write(self.cache, &mut self.out);
        if self.out.len() == before {
            self.out.truncate(mark);
        } else {
            self.first = false;
        }
    }

    /// Adds the JSON of a history message, remembered or written now by `encode`.
    pub(crate) fn message(&mut self, message: &Arc<Message>, encode: impl FnOnce(&Message, &mut Vec<u8>)) {
        self.item(|cache, out| cache.write(message, out, encode));
    }

    /// Closes the array and the object; forgets the messages no history holds any more.
    pub(crate) fn finish(mut self) -> Bytes {
        self.out.extend_from_slice(b"]}");
        self.cache.sweep();
        Bytes::from(self.out)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;
    use crate::{Part, ProviderKind, ProviderSettings, ReasoningField, Request, Role};

    pub(super) fn settings(kind: ProviderKind) -> ProviderSettings {
        ProviderSettings {
            kind,
            base_url: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            api_key: None,
            api_key_env: None,
            max_tokens: 1000,
            reasoning: crate::Reasoning::default(),
            context_window: None,
            timeouts: crate::Timeouts::default(),
            price: None,
            images: None,
            retry: crate::RetryPolicy::default(),
        }
    }

    fn body(kind: ProviderKind, request: &Request, cache: &mut EncodeCache) -> Vec<u8> {
        let settings = settings(kind);
        let body = match kind {
            ProviderKind::OpenAi => crate::openai::request_body(&settings, request, cache),
            ProviderKind::Anthropic => crate::anthropic::request_body(&settings, request, cache),
        };
        let bytes = body.to_vec();
        cache.recycle(body);
        bytes
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), "[a-z \"\\\\\n\t]{0,12}", any::<String>()]
    }

    fn part() -> impl Strategy<Value = Part> {
        let field = prop_oneof![
            Just(None),
            Just(Some(ReasoningField::ReasoningContent)),
            Just(Some(ReasoningField::Reasoning)),
            Just(Some(ReasoningField::ThinkingPart)),
        ];
        prop_oneof![
            text().prop_map(|text| Part::Text { text }),
            (text(), proptest::option::of(text()), field).prop_map(|(text, signature, field)| Part::Thinking {
                text,
                signature,
                field
            }),
            text().prop_map(|data| Part::RedactedThinking { data }),
            (text(), text(), prop_oneof![text().prop_map(|t| json!({ "a": t })), Just(json!("raw")), Just(json!({}))])
                .prop_map(|(id, name, arguments)| Part::ToolCall { id, name, arguments, extra: None }),
            (text(), text(), any::<bool>()).prop_map(|(call_id, content, is_error)| Part::ToolResult {
                call_id,
                content,
                is_error
            }),
        ]
    }

    fn message() -> impl Strategy<Value = Message> {
        (any::<bool>(), proptest::collection::vec(part(), 0..4))
            .prop_map(|(user, content)| Message { role: if user { Role::User } else { Role::Assistant }, content })
    }

    /// What happens to a history between requests.
    #[derive(Debug, Clone)]
    enum Step {
        Push(Message),
        /// A message replaced by another (an edited turn).
        Replace(usize, Message),
        /// The same content in a new allocation (a history loaded again).
        Copy(usize),
        /// The first messages replaced by a summary (compaction).
        Compact(usize, Message),
        /// A new conversation.
        Clear,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => message().prop_map(Step::Push),
            1 => (any::<usize>(), message()).prop_map(|(i, m)| Step::Replace(i, m)),
            1 => any::<usize>().prop_map(Step::Copy),
            1 => (any::<usize>(), message()).prop_map(|(i, m)| Step::Compact(i, m)),
            1 => Just(Step::Clear),
        ]
    }

    /// The buffer of a body that went out (and is held by nothing else) carries the next body;
    /// one still held elsewhere is left alone.
    #[test]
    fn a_sent_body_buffer_carries_the_next_one() {
        let text = Part::Text { text: "x".repeat(100_000) };
        let messages = vec![Arc::new(Message { role: Role::User, content: vec![text] })];
        let request = Request { messages, ..Request::default() };
        let settings = settings(ProviderKind::OpenAi);
        let mut cache = EncodeCache::default();
        // The first buffer is sized before the history is known; from then on one is enough.
        let first = crate::openai::request_body(&settings, &request, &mut cache);
        cache.recycle(first);
        let first = crate::openai::request_body(&settings, &request, &mut cache);
        let address = first.as_ptr();
        cache.recycle(first);
        let second = crate::openai::request_body(&settings, &request, &mut cache);
        assert_eq!(second.as_ptr(), address);
        let held = second.clone();
        cache.recycle(second);
        let third = crate::openai::request_body(&settings, &request, &mut cache);
        assert_ne!(third.as_ptr(), held.as_ptr());
        assert_eq!(third, held);
    }

    proptest! {
        /// A body written with the messages of earlier requests remembered is the body written
        /// afresh, byte for byte, whatever happens to the history between requests; and the
        /// cache holds no message the history dropped.
        #[test]
        fn remembered_messages_write_the_same_body(
            anthropic in any::<bool>(),
            system in text(),
            steps in proptest::collection::vec(step(), 1..40),
        ) {
            let kind = if anthropic { ProviderKind::Anthropic } else { ProviderKind::OpenAi };
            let mut cache = EncodeCache::default();
            let mut history: Vec<Arc<Message>> = Vec::new();
            for step in steps {
                match step {
                    Step::Push(m) => history.push(Arc::new(m)),
                    Step::Replace(i, m) if !history.is_empty() => {
                        let i = i % history.len();
                        history[i] = Arc::new(m);
                    }
                    Step::Copy(i) if !history.is_empty() => {
                        let i = i % history.len();
                        history[i] = Arc::new((*history[i]).clone());
                    }
                    Step::Compact(k, m) if !history.is_empty() => {
                        let k = k % history.len() + 1;
                        history.splice(..k, [Arc::new(m)]);
                    }
                    Step::Clear => history.clear(),
                    Step::Replace(..) | Step::Copy(_) | Step::Compact(..) => {}
                }
                let request = Request { system: system.clone(), messages: history.clone(), ..Request::default() };
                let remembered = body(kind, &request, &mut cache);
                let fresh = body(kind, &request, &mut EncodeCache::default());
                prop_assert_eq!(&remembered, &fresh);
                let parsed: Value = serde_json::from_slice(&remembered).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(parsed["messages"].is_array());
                drop(request);
                let alive: std::collections::HashSet<usize> =
                    history.iter().map(|m| Arc::as_ptr(m) as usize).collect();
                prop_assert!(cache.len() <= alive.len(), "{} remembered for {} messages", cache.len(), alive.len());
            }
        }
    }
}
