//! Arbitrary bytes as a chunked body: never a panic, and feeding them in two pieces
//! gives exactly what one piece gives.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some((&split, body)) = data.split_first() {
        kiln_http::fuzzing::decode_chunked(body, usize::from(split));
    }
});
