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
//! per 4 KiB on every request, more than copying the remembered text into a warm one. And what
//! it held is used again in place: a request is the last one plus a message or two, so the
//! writer walks the last body item by item and keeps every leading item that is the same (the
//! same message, by the same identity argument, or the same bytes), writing only from the first
//! difference on. Half a megabyte of history is then not copied again for each request.

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
    /// The buffer of a body already sent, for the next one, with what it holds when that is
    /// known.
    spare: Option<(Vec<u8>, Option<Layout>)>,
    /// What the last body written holds (its buffer is identified by address).
    last: Option<Layout>,
    /// Bytes of the last body kept in place from the body before (for tests).
    #[cfg(test)]
    in_place: usize,
}

/// Where the items of a body written into a buffer are.
struct Layout {
    /// The buffer's address and the body's length (a recycled buffer is matched to its layout
    /// by them).
    at: usize,
    len: usize,
    /// Bytes of the head, up to and including `"messages":[`.
    head: usize,
    items: Vec<Placed>,
}

/// One item of the `messages` array, as a body holds it.
struct Placed {
    /// The message written, for an item written from one ([`BodyWriter::message`]); `None`
    /// for an item written by the format ([`BodyWriter::item`]), matched by its bytes. The
    /// `Weak` keeps the allocation, hence the identity, as the cache's entries do.
    message: Option<Weak<Message>>,
    /// Where it ends (its leading comma, when it has one, belongs to it); an item that wrote
    /// nothing ends where it starts.
    end: usize,
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

    /// A buffer for a body: the last body's when it came back (with what it holds, when that
    /// is known), big enough for the history remembered here.
    fn buffer(&mut self) -> (Vec<u8>, Option<Layout>) {
        let (mut buffer, layout) = self.spare.take().unwrap_or_default();
        if layout.is_none() {
            buffer.clear();
        }
        buffer.reserve((self.bytes + 64 * 1024).saturating_sub(buffer.len()));
        (buffer, layout)
    }

    /// Takes back the buffer of a body that was sent, when nothing else holds it any more.
    pub(crate) fn recycle(&mut self, body: Bytes) {
        if let Ok(body) = body.try_into_mut() {
            let buffer = Vec::from(body);
            // Only a buffer worth keeping: no bigger than what the history may need again.
            if buffer.capacity() <= (self.bytes + 64 * 1024) * 2 {
                // What it holds is known when it is the last body written (not one of another
                // session's requests that went out at the same time).
                let layout = self
                    .last
                    .take()
                    .filter(|layout| layout.at == buffer.as_ptr() as usize && layout.len == buffer.len());
                self.spare = Some((buffer, layout));
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
    /// The last body's items, while this body's items so far are the same (they are kept in
    /// place: `out` holds them, and the rest of the last body after `kept`).
    last: Option<Layout>,
    /// Bytes of this body's head, up to and including `"messages":[`.
    head: usize,
    /// Where this body's items so far end.
    kept: usize,
    /// This body's items, as they are placed.
    items: Vec<Placed>,
    /// Room for an item written to be compared with the last body's.
    scratch: Vec<u8>,
    /// Bytes kept in place from the last body (its head and its first items).
    in_place: usize,
}

impl<'c> BodyWriter<'c> {
    /// Writes `head` as a JSON object left open, then `"messages":[`, into a recycled buffer
    /// (kept as it is when the last body in it had the same head).
    pub(crate) fn open(cache: &'c mut EncodeCache, head: &impl serde::Serialize) -> Self {
        let (mut out, last) = cache.buffer();
        let mut opened = Vec::with_capacity(4096);
        // Borrowed strings and JSON values: writing them cannot fail.
        let _ = serde_json::to_writer(&mut opened, head);
        if opened.last() == Some(&b'}') {
            opened.pop();
        }
        if opened.last() != Some(&b'{') {
            opened.push(b',');
        }
        opened.extend_from_slice(b"\"messages\":[");
        let last = last.filter(|last| last.head == opened.len() && out.get(..last.head) == Some(&opened[..]));
        if last.is_none() {
            out.clear();
            out.extend_from_slice(&opened);
        }
        let head = opened.len();
        let in_place = if last.is_some() { head } else { 0 };
        Self { cache, out, first: true, last, head, kept: head, items: Vec::new(), scratch: opened, in_place }
    }

    /// The last body's item at this position, while the items so far are the same.
    fn next_last(&self) -> Option<&Placed> {
        self.last.as_ref().and_then(|last| last.items.get(self.items.len()))
    }

    /// The items from here on differ from the last body's: what follows this body's items so
    /// far goes, and the rest is written.
    fn diverge(&mut self) {
        if self.last.take().is_some() {
            self.in_place = self.kept;
            self.out.truncate(self.kept);
        }
    }

    /// Appends the items `write` writes, after a comma only when they are not empty, and
    /// records them as one item (of `message`, when written from one).
    fn append(&mut self, message: Option<Weak<Message>>, write: impl FnOnce(&mut EncodeCache, &mut Vec<u8>)) {
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
        self.kept = self.out.len();
        self.items.push(Placed { message, end: self.kept });
    }

    /// Adds the items `write` writes (none, one, or several comma-separated): a comma goes
    /// before them only when they are not empty.
    pub(crate) fn item(&mut self, write: impl FnOnce(&mut EncodeCache, &mut Vec<u8>)) {
        if self.last.is_some() {
            // Written aside, and kept in place when the last body has the same bytes here.
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            write(self.cache, &mut scratch);
            let comma = !self.first && !scratch.is_empty();
            let same = self.next_last().is_some_and(|last| {
                let held = self.out.get(self.kept..last.end).unwrap_or_default();
                last.message.is_none()
                    && held.len() == scratch.len() + usize::from(comma)
                    && held.starts_with(if comma { b"," } else { b"" })
                    && held[usize::from(comma)..] == scratch[..]
            });
            if same {
                self.kept += scratch.len() + usize::from(comma);
                self.items.push(Placed { message: None, end: self.kept });
                self.first &= scratch.is_empty();
            } else {
                self.diverge();
                self.append(None, |_, out| out.extend_from_slice(&scratch));
            }
            self.scratch = scratch;
            return;
        }
        self.append(None, write);
    }

    /// Adds the JSON of a history message, remembered or written now by `encode`.
    pub(crate) fn message(&mut self, message: &Arc<Message>, encode: impl FnOnce(&Message, &mut Vec<u8>)) {
        let same = self
            .next_last()
            .and_then(|last| Some((last.message.as_ref()?, last.end)))
            .filter(|(last, _)| std::ptr::eq(last.as_ptr(), Arc::as_ptr(message)));
        if let Some((_, end)) = same {
            // The same message, so the same bytes: kept where they are.
            self.first &= end == self.kept;
            self.kept = end;
            self.items.push(Placed { message: Some(Arc::downgrade(message)), end });
            return;
        }
        self.diverge();
        self.append(Some(Arc::downgrade(message)), |cache, out| cache.write(message, out, encode));
    }

    /// Closes the array and the object; forgets the messages no history holds any more.
    pub(crate) fn finish(mut self) -> Bytes {
        // The last body may have had more items, and its closing brackets: they go.
        self.diverge();
        #[cfg(test)]
        {
            self.cache.in_place = self.in_place;
        }
        self.out.extend_from_slice(b"]}");
        self.cache.sweep();
        let (at, len) = (self.out.as_ptr() as usize, self.out.len());
        self.cache.last = Some(Layout { at, len, head: self.head, items: self.items });
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
        /// Another system prompt (a new head, or a new first item).
        System(String),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => message().prop_map(Step::Push),
            1 => (any::<usize>(), message()).prop_map(|(i, m)| Step::Replace(i, m)),
            1 => any::<usize>().prop_map(Step::Copy),
            1 => (any::<usize>(), message()).prop_map(|(i, m)| Step::Compact(i, m)),
            1 => Just(Step::Clear),
            1 => prop_oneof![text(), "[ab]{4}"].prop_map(Step::System),
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

    /// A request that adds a message to the last one writes that message and the closing
    /// brackets, and keeps the rest of the last body in place: the head and the whole history.
    #[test]
    fn the_next_request_writes_only_what_is_new() {
        for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
            let settings = settings(kind);
            let write = |request: &Request, cache: &mut EncodeCache| match kind {
                ProviderKind::OpenAi => crate::openai::request_body(&settings, request, cache),
                ProviderKind::Anthropic => crate::anthropic::request_body(&settings, request, cache),
            };
            let say = |text: &str| {
                Arc::new(Message { role: Role::User, content: vec![Part::Text { text: text.repeat(1000) }] })
            };
            let mut request =
                Request { system: "be brief".into(), messages: vec![say("a"), say("b")], ..Request::default() };
            let mut cache = EncodeCache::default();
            let first = write(&request, &mut cache);
            cache.recycle(first);
            request.messages.push(say("c"));
            let second = write(&request, &mut cache);
            let fresh = write(&request, &mut EncodeCache::default());
            assert_eq!(second, fresh);
            let rewritten = second.len() - cache.in_place;
            // Anthropic marks the latest message for its cache: that one is written again too.
            let new = if kind == ProviderKind::Anthropic { 2 } else { 1 };
            assert!(rewritten < new * 1000 + 200, "{kind:?}: {rewritten} of {} bytes written again", second.len());
            assert!(rewritten >= 1000, "{kind:?}: the new message was not written");
        }
    }

    proptest! {
        /// A body written with the messages of earlier requests remembered is the body written
        /// afresh, byte for byte, whatever happens to the history between requests; and the
        /// cache holds no message the history dropped.
        #[test]
        fn remembered_messages_write_the_same_body(
            anthropic in any::<bool>(),
            system in text(),
            steps in proptest::collection::vec((step(), any::<bool>()), 1..40),
        ) {
            let kind = if anthropic { ProviderKind::Anthropic } else { ProviderKind::OpenAi };
            let settings = settings(kind);
            let mut system = system;
            let mut cache = EncodeCache::default();
            let mut history: Vec<Arc<Message>> = Vec::new();
            // A body still held elsewhere (a retry, say) when the next is written: its buffer
            // cannot carry the next body.
            let mut held: Option<Bytes> = None;
            for (step, hold) in steps {
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
                    Step::System(text) => system = text,
                    Step::Replace(..) | Step::Copy(_) | Step::Compact(..) => {}
                }
                let request = Request { system: system.clone(), messages: history.clone(), ..Request::default() };
                let sent = match kind {
                    ProviderKind::OpenAi => crate::openai::request_body(&settings, &request, &mut cache),
                    ProviderKind::Anthropic => crate::anthropic::request_body(&settings, &request, &mut cache),
                };
                let remembered = sent.to_vec();
                if let Some(earlier) = held.take() {
                    cache.recycle(earlier);
                }
                if hold { held = Some(sent) } else { cache.recycle(sent) }
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
