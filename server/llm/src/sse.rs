//! A Server-Sent Events parser that accepts bytes in chunks split anywhere.
//!
//! Follows the WHATWG event-stream rules that matter for model providers: lines end in `\n`,
//! `\r\n` or a lone `\r`; `data:` lines of one event join with `\n`; a blank line dispatches;
//! lines starting with `:` are comments; one space after the colon is dropped; unknown fields
//! are ignored. Lines are decoded only once complete, so a UTF-8 character split across chunks
//! survives; invalid UTF-8 is replaced, never a panic.

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field, empty when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental parser: [`SseParser::push`] bytes, collect events.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    /// The previous byte was a `\r` that ended a line, so a following `\n` belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds `bytes`; appends every event completed by them to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        for &byte in bytes {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\n' => self.end_line(out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out);
                }
                _ => self.line.push(byte),
            }
        }
    }

    /// The stream ended: an event not terminated by a blank line is dropped (as the spec says),
    /// but a last line without its line ending still counts as a line first.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            self.end_line(out);
        }
        // Providers that close right after the last `data:` line without a blank line still
        // meant that event; keeping it is more useful than the spec's strictness.
        self.dispatch(out);
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        if self.line.is_empty() {
            self.dispatch(out);
            return;
        }
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent { event: std::mem::take(&mut self.event), data: std::mem::take(&mut self.data) });
        } else {
            self.event.clear();
        }
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk, &mut out);
        }
        parser.finish(&mut out);
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent { event: event.into(), data: data.into() }
    }

    const SAMPLE: &str = ": keep-alive comment\r\n\
        event: message_start\r\n\
        data: {\"a\":1}\r\n\
        \r\n\
        data: line one\n\
        data:line two\n\
        id: 7\n\
        retry: 100\n\
        \n\
        event: lone-cr\rdata: é ü 漢\r\r\
        data\n\
        \n\
        event: ignored-without-data\n\
        \n\
        data: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            ev("message_start", "{\"a\":1}"),
            ev("", "line one\nline two"),
            ev("lone-cr", "é ü 漢"),
            ev("", ""),
            ev("", "[DONE]"),
        ]
    }

    #[test]
    fn parses_fields_line_endings_and_comments() {
        assert_eq!(parse_chunks(&[SAMPLE.as_bytes()]), expected());
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(parse_chunks(&[&bytes[..cut], &bytes[cut..]]), expected(), "cut at {cut}");
        }
    }

    #[test]
    fn byte_by_byte() {
        let chunks: Vec<&[u8]> = SAMPLE.as_bytes().chunks(1).collect();
        assert_eq!(parse_chunks(&chunks), expected());
    }

    #[test]
    fn last_event_without_blank_line_is_kept() {
        assert_eq!(parse_chunks(&[b"data: x"]), vec![ev("", "x")]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(parse_chunks(&[b"data: \xff\xfe\n\n"]), vec![ev("", "\u{fffd}\u{fffd}")]);
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_events(cuts in proptest::collection::vec(0..SAMPLE.len(), 0..8)) {
            let bytes = SAMPLE.as_bytes();
            let mut cuts = cuts;
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for cut in cuts {
                chunks.push(&bytes[start..cut]);
                start = cut;
            }
            chunks.push(&bytes[start..]);
            prop_assert_eq!(parse_chunks(&chunks), expected());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256), cut in 0usize..256) {
            let cut = cut.min(bytes.len());
            parse_chunks(&[&bytes[..cut], &bytes[cut..]]);
        }
    }
}
