//! Newline-delimited framing (ACP): one message per line, lines capped without being held.

/// Longest line (one message) read from the client; a longer one is skipped with an error.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// One line read by [`read_line`].
pub enum Line {
    /// The input ended.
    End,
    /// A line (without its newline), in the buffer given.
    Read,
    /// A line longer than the limit: it was skipped up to its newline.
    TooLong(usize),
}

/// Reads one line into `line` (cleared first), holding at most `max` bytes of it: a longer
/// line is read to its end and dropped, so one huge message costs no memory and the next one
/// is read normally.
pub async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    use tokio::io::AsyncBufReadExt;
    line.clear();
    let mut skipped = 0usize;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (skipped, line.is_empty()) {
                (0, true) => Line::End,
                (0, false) => Line::Read,
                (n, _) => Line::TooLong(n),
            });
        }
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..=at], true),
            None => (buffer, false),
        };
        let used = chunk.len();
        if skipped > 0 || line.len() + used > max {
            skipped += line.len() + used;
            line.clear();
        } else {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if done {
            return Ok(if skipped > 0 { Line::TooLong(skipped) } else { Line::Read });
        }
    }
}
