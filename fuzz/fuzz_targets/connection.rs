//! Arbitrary bytes as what a client sends on one connection: the responses are
//! well-formed HTTP/1.1, never outnumber the complete requests (but for the refusal
//! that closes), and the worker's buffering budget is whole again afterwards.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    kiln_http::fuzzing::serve_connection(data);
});
