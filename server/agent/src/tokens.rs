//! Sizes in bytes and tokens, before the provider has counted any.

/// Bytes per token before the provider has reported any counts: low, so a first estimate
/// errs on the large side.
pub(crate) const DEFAULT_BYTES_PER_TOKEN: f64 = 3.0;

/// Counts bytes without keeping them.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `value` as JSON, without building the text.
pub(crate) fn json_size<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => 0,
    }
}
