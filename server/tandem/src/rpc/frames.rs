//! The LSP base protocol's framing on input: `Content-Length: N`, optional other headers, a
//! blank line, then N bytes of body.
//!
//! The reader never trusts a header block it cannot parse: it resynchronises on the next
//! `Content-Length:` after the bad one, so a header line that lost its newline (glued to the
//! next message's header) costs at most that one message, never the stream. A body over the
//! cap is read past and dropped, never buffered.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bodies larger than this are discarded (their bytes are read and dropped as they come).
pub const MAX_BODY: usize = 512 * 1024 * 1024;
/// A header block longer than this is junk.
const MAX_HEADER: usize = 8 * 1024;
/// The header every message starts with (names are case-insensitive).
const CONTENT_LENGTH: &[u8] = b"content-length:";
/// How much is read from the input at a time.
const READ_CHUNK: usize = 64 * 1024;

/// One frame read by [`FrameReader::next`].
#[derive(Debug, PartialEq)]
pub enum Frame<'a> {
    /// A message body (valid until the next call).
    Body(&'a [u8]),
    /// A body of this many bytes, over the cap: skipped.
    TooLarge(usize),
    /// The input ended (a partial message at the end is dropped).
    End,
}

/// Reads LSP frames from `input`.
pub struct FrameReader<R> {
    input: R,
    buf: Vec<u8>,
    /// Where unread bytes start in `buf`.
    start: usize,
    max_body: usize,
}

/// What parsing a header block found.
enum Header {
    /// The body's length and where it starts in the buffer.
    Complete { length: usize, body_at: usize },
    /// More input is needed.
    Incomplete,
    /// Not a header block: resynchronise after its `Content-Length:`.
    Corrupt(String),
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader with the default body cap.
    pub fn new(input: R) -> Self {
        Self::with_max_body(input, MAX_BODY)
    }

    /// A reader discarding bodies over `max_body` bytes.
    pub fn with_max_body(input: R, max_body: usize) -> Self {
        Self { input, buf: Vec::with_capacity(READ_CHUNK), start: 0, max_body }
    }

    /// The next frame.
    pub async fn next(&mut self) -> std::io::Result<Frame<'_>> {
        loop {
            if !self.find_header().await? {
                return Ok(Frame::End);
            }
            match self.header() {
                Header::Corrupt(why) => {
                    tracing::error!("skipping a corrupt LSP header ({why})");
                    self.start += 1;
                }
                Header::Incomplete => {
                    if !self.fill().await? {
                        return Ok(Frame::End);
                    }
                }
                Header::Complete { length, body_at } => {
                    self.start = body_at;
                    if length > self.max_body {
                        return self.skip_body(length).await;
                    }
                    if !self.fill_to(body_at + length).await? {
                        return Ok(Frame::End);
                    }
                    // `fill_to` may have moved the unread bytes to the front of the buffer.
                    let at = self.start;
                    self.start += length;
                    return Ok(Frame::Body(&self.buf[at..at + length]));
                }
            }
        }
    }

    /// Moves `start` to the next `Content-Length:`, reading as needed; bytes skipped on the
    /// way are junk (logged). `false` at the end of input.
    async fn find_header(&mut self) -> std::io::Result<bool> {
        loop {
            let unread = &self.buf[self.start..];
            if let Some(at) = find_ignore_case(unread, CONTENT_LENGTH) {
                report_junk(&unread[..at]);
                self.start += at;
                return Ok(true);
            }
            // Keep a tail that may be the start of a header split across reads.
            let keep = unread.len().min(CONTENT_LENGTH.len() - 1);
            report_junk(&unread[..unread.len() - keep]);
            self.start = self.buf.len() - keep;
            if !self.fill().await? {
                report_junk(&self.buf[self.start..]);
                return Ok(false);
            }
        }
    }

    /// Parses the header block at `start` (which begins with `Content-Length:`).
    fn header(&self) -> Header {
        let unread = &self.buf[self.start..];
        let Some(end) = blank_line(unread) else {
            return if unread.len() > MAX_HEADER {
                Header::Corrupt(format!("no blank line within {MAX_HEADER} bytes"))
            } else {
                Header::Incomplete
            };
        };
        if end.block > MAX_HEADER {
            return Header::Corrupt(format!("a header block over {MAX_HEADER} bytes"));
        }
        let mut lines = unread[..end.block].split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        let first = lines.next().unwrap_or_default();
        let value = String::from_utf8_lossy(first.get(CONTENT_LENGTH.len()..).unwrap_or_default());
        let Ok(length) = value.trim().parse::<usize>() else {
            return Header::Corrupt(format!("Content-Length {:?}", truncate(&value)));
        };
        for line in lines {
            if find_ignore_case(line, CONTENT_LENGTH).is_some() {
                return Header::Corrupt("a second Content-Length in one header block".to_owned());
            }
            if !line.contains(&b':') {
                // Not a header, but not a frame boundary either: the old guard's leniency.
                tracing::warn!(
                    "ignoring a line that is not an LSP header: {:?}",
                    truncate(&String::from_utf8_lossy(line))
                );
            }
        }
        Header::Complete { length, body_at: self.start + end.body }
    }

    /// Reads past a body over the cap without holding it.
    async fn skip_body(&mut self, length: usize) -> std::io::Result<Frame<'_>> {
        tracing::error!(length, "discarding a message larger than {} bytes", self.max_body);
        let mut left = length;
        loop {
            let unread = self.buf.len() - self.start;
            let used = unread.min(left);
            self.start += used;
            left -= used;
            if left == 0 {
                return Ok(Frame::TooLarge(length));
            }
            if !self.fill().await? {
                return Ok(Frame::End);
            }
        }
    }

    /// Reads until the buffer holds `end` bytes (as counted from before any compaction).
    async fn fill_to(&mut self, end: usize) -> std::io::Result<bool> {
        let wanted = end - self.start;
        while self.buf.len() - self.start < wanted {
            self.buf.reserve(wanted - (self.buf.len() - self.start));
            if !self.fill().await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads once more from the input. `false` at the end of input.
    async fn fill(&mut self) -> std::io::Result<bool> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
            // One huge message must not keep its buffer for the rest of the session.
            if self.buf.capacity() > 4 * READ_CHUNK && self.buf.len() < READ_CHUNK {
                self.buf.shrink_to(2 * READ_CHUNK);
            }
        }
        self.buf.reserve(READ_CHUNK);
        Ok(self.input.read_buf(&mut self.buf).await? > 0)
    }
}

/// Where a header block ends: `block` is its length without the blank line, `body` where the
/// body starts.
struct BlockEnd {
    block: usize,
    body: usize,
}

/// The first blank line (`\r\n\r\n`, or a lenient `\n\n` / `\n\r\n`) in `bytes`.
fn blank_line(bytes: &[u8]) -> Option<BlockEnd> {
    let mut from = 0;
    while let Some(at) = bytes[from..].iter().position(|&b| b == b'\n').map(|i| from + i) {
        let rest = &bytes[at + 1..];
        if rest.starts_with(b"\n") {
            return Some(BlockEnd { block: line_start_end(bytes, at), body: at + 2 });
        }
        if rest.starts_with(b"\r\n") {
            return Some(BlockEnd { block: line_start_end(bytes, at), body: at + 3 });
        }
        from = at + 1;
    }
    None
}

/// The end of the line that ends with the newline at `newline` (without its `\r`).
fn line_start_end(bytes: &[u8], newline: usize) -> usize {
    if newline > 0 && bytes[newline - 1] == b'\r' { newline - 1 } else { newline }
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window.eq_ignore_ascii_case(needle))
}

/// Logs bytes skipped while looking for a header, unless they are blank or other headers.
fn report_junk(bytes: &[u8]) {
    // Between well-formed messages there is nothing: the common case costs one compare.
    if bytes.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(bytes);
    let junk = text
        .lines()
        .map(str::trim)
        .any(|line| !line.is_empty() && !line.get(..13).is_some_and(|name| name.eq_ignore_ascii_case("content-type:")));
    if junk {
        tracing::error!("skipping {} bytes that are not an LSP message: {:?}", bytes.len(), truncate(&text));
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every body in `input`, read in pieces of `chunk` bytes (`TooLarge` as `<skipped N>`).
    async fn bodies(input: &[u8], chunk: usize, max_body: usize) -> Vec<String> {
        let (mut writer, reader) = tokio::io::duplex(chunk.max(1));
        let input = input.to_vec();
        let feed = tokio::spawn(async move {
            for piece in input.chunks(chunk) {
                if tokio::io::AsyncWriteExt::write_all(&mut writer, piece).await.is_err() {
                    return;
                }
            }
        });
        let mut reader = FrameReader::with_max_body(reader, max_body);
        let mut out = Vec::new();
        loop {
            match reader.next().await {
                Ok(Frame::Body(body)) => out.push(String::from_utf8_lossy(body).into_owned()),
                Ok(Frame::TooLarge(n)) => out.push(format!("<skipped {n}>")),
                Ok(Frame::End) | Err(_) => break,
            }
        }
        feed.await.ok();
        out
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn two_messages_in_one_read() {
        let input = format!("{}{}", frame("{\"a\":1}"), frame("{\"b\":2}"));
        assert_eq!(bodies(input.as_bytes(), 4096, MAX_BODY).await, ["{\"a\":1}", "{\"b\":2}"]);
    }

    #[tokio::test]
    async fn a_message_split_across_reads_at_every_byte() {
        let input = format!(
            "{}Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n{}",
            frame("{\"first\":true}"),
            frame("{\"second\":\"é\"}")
        );
        for chunk in 1..input.len() {
            assert_eq!(
                bodies(input.as_bytes(), chunk, MAX_BODY).await,
                ["{\"first\":true}", "{\"second\":\"é\"}"],
                "read {chunk} bytes at a time"
            );
        }
    }

    #[tokio::test]
    async fn a_header_line_without_its_newline_does_not_swallow_the_next_message() {
        // The first header lost its line end and is glued to the next message's header.
        let input = format!("Content-Length: 7{}", frame("{\"ok\":1}"));
        assert_eq!(bodies(input.as_bytes(), 4096, MAX_BODY).await, ["{\"ok\":1}"]);
        let input = format!("Content-Length: 7\r\nX-Junk{}", frame("{\"ok\":2}"));
        assert_eq!(bodies(input.as_bytes(), 3, MAX_BODY).await, ["{\"ok\":2}"]);
    }

    #[tokio::test]
    async fn resynchronises_after_corrupt_headers_and_junk() {
        let input = format!(
            "garbage line\r\nContent-Length: nine\r\n\r\n{{junk}}{}\r\n\r\nmore junk{}",
            frame("{\"a\":1}"),
            frame("{\"b\":2}")
        );
        assert_eq!(bodies(input.as_bytes(), 5, MAX_BODY).await, ["{\"a\":1}", "{\"b\":2}"]);
    }

    #[tokio::test]
    async fn a_huge_content_length_is_discarded_without_being_held() {
        let huge = "x".repeat(10_000);
        let input = format!("{}{}{}", frame("{\"a\":1}"), frame(&huge), frame("{\"b\":2}"));
        assert_eq!(bodies(input.as_bytes(), 512, 1000).await, ["{\"a\":1}", "<skipped 10000>", "{\"b\":2}"]);
        // A length announced past the end of input is not waited for in memory either.
        let input = "Content-Length: 99999999999\r\n\r\n{}";
        assert_eq!(bodies(input.as_bytes(), 4096, 1000).await, Vec::<String>::new());
    }

    #[tokio::test]
    async fn the_buffer_holds_no_more_than_a_frame_when_skipping() {
        let (mut writer, reader) = tokio::io::duplex(64 * 1024);
        let feed = tokio::spawn(async move {
            let header = format!("Content-Length: {}\r\n\r\n", 8 << 20);
            tokio::io::AsyncWriteExt::write_all(&mut writer, header.as_bytes()).await.ok();
            let block = vec![b'x'; 1 << 20];
            for _ in 0..8 {
                tokio::io::AsyncWriteExt::write_all(&mut writer, &block).await.ok();
            }
        });
        let mut reader = FrameReader::with_max_body(reader, 1 << 20);
        assert_eq!(reader.next().await.ok(), Some(Frame::TooLarge(8 << 20)));
        assert!(reader.buf.capacity() < 1 << 20, "the skipped body was buffered: {}", reader.buf.capacity());
        feed.await.ok();
    }
}
