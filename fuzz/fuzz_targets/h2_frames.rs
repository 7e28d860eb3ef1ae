//! Arbitrary bytes as the HTTP/2 frames a client sends after its preface, through
//! kiln's own frame layer: never a panic, every frame written well-formed, every
//! stream's budget given back.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Some((&split, frames)) = data.split_first() {
        kiln_http::fuzzing::h2_frames(frames, usize::from(split) * 4);
    }
});
