//! Buffers for whole files. A fresh buffer costs a page fault per 4 KiB page the first time it
//! is written: for a 50 MB file that is 12,800 faults, most of the time of reading it (three to
//! four times a warm copy on a virtual machine). A large buffer asks the kernel for transparent
//! huge pages instead (2 MiB each, where the system allows them with `madvise`), which makes
//! filling it about as fast as copying into memory already touched.

/// Buffers smaller than this are left to the allocator as they are.
const HUGE_FROM: usize = 4 * 1024 * 1024;
/// The size of a transparent huge page on x86-64 and arm64 (with 4 KiB base pages).
const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// An empty byte buffer with room for `capacity` bytes.
pub fn buffer(capacity: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(capacity);
    if capacity >= HUGE_FROM {
        prefer_huge_pages(bytes.spare_capacity_mut().as_mut_ptr().cast(), capacity);
    }
    bytes
}

/// An empty string with room for `capacity` bytes.
pub fn string(capacity: usize) -> String {
    // An empty buffer is valid UTF-8.
    String::from_utf8(buffer(capacity)).unwrap_or_default()
}

/// Asks for huge pages for the whole huge pages inside `len` bytes from `start`. Advice only:
/// when the kernel says no (THP off, or not Linux), nothing changes.
fn prefer_huge_pages(start: *mut u8, len: usize) {
    let first = start.addr().next_multiple_of(HUGE_PAGE);
    let end = (start.addr() + len) / HUGE_PAGE * HUGE_PAGE;
    if end <= first {
        return;
    }
    let range = start.wrapping_add(first - start.addr());
    // SAFETY: `MADV_HUGEPAGE` changes how the kernel backs the pages of the range, never their
    // contents or whether they may be accessed, and the range lies inside the allocation of
    // `len` bytes at `start` that the caller owns.
    #[expect(unsafe_code, reason = "madvise(2) takes a raw address range")]
    let advised = unsafe { rustix::mm::madvise(range.cast(), end - first, rustix::mm::Advice::LinuxHugepage) };
    // Refused (THP off, an old kernel): the buffer works the same on small pages.
    advised.ok();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size, small or huge, gives an empty buffer with at least that room, which holds
    /// what is written into it.
    #[test]
    fn buffers_of_any_size_hold_what_is_put_in_them() {
        for capacity in [0, 1, 4095, HUGE_FROM - 1, HUGE_FROM, HUGE_FROM + 12_345, 3 * HUGE_FROM] {
            let mut bytes = buffer(capacity);
            assert!(bytes.is_empty() && bytes.capacity() >= capacity);
            bytes.extend((0..capacity).map(|i| (i % 251) as u8));
            assert!(bytes.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
            let mut text = string(capacity);
            text.extend(std::iter::repeat_n('x', capacity));
            assert_eq!(text.len(), capacity);
        }
    }
}
