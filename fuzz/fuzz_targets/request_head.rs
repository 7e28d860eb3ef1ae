//! Arbitrary bytes as a request head: never a panic, offsets always in bounds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = kiln_http::fuzzing::parse_request_head(data);
});
