//! The input after a `*** Begin Patch` line, so the fuzzer explores that grammar: parse, then
//! apply each file to texts derived from it. Must never panic.
#![no_main]

mod patch_common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(body) = std::str::from_utf8(data) {
        patch_common::check(&format!("*** Begin Patch\n{body}"));
    }
});
