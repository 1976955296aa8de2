//! Arbitrary bytes as patch text (unified diffs mostly, since that is what `parse` falls back
//! to): parse, then apply each file to texts derived from it. Must never panic.
#![no_main]

mod patch_common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        patch_common::check(text);
    }
});
