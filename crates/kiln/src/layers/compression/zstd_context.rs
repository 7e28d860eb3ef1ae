//! zstd for whole bodies on a context kept per worker: a new context allocates and
//! sets up its tables on every response, a kept one is reset (zstd keeps its workspace
//! from one frame to the next, and shrinks it if it stays far too large). Streams keep
//! a stream encoder of their own.

use std::cell::RefCell;
use std::io;

use zstd::bulk::Compressor;

thread_local! {
    /// The worker's context and the level it is set to.
    static CONTEXT: RefCell<Option<(i32, Compressor<'static>)>> = const { RefCell::new(None) };
}

/// `body` as one zstd frame at `level` (with its size in the frame header).
pub(crate) fn compress(level: i32, body: &[u8]) -> io::Result<Vec<u8>> {
    let kept = CONTEXT.try_with(|context| {
        let mut context = context.borrow_mut();
        match &mut *context {
            Some((l, _)) if *l == level => {}
            Some((l, compressor)) => {
                compressor.set_compression_level(level)?;
                *l = level;
            }
            None => *context = Some((level, Compressor::new(level)?)),
        }
        context.as_mut().expect("set above").1.compress(body)
    });
    // A thread being torn down has no context left.
    kept.unwrap_or_else(|_| zstd::bulk::compress(body, level))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_context_compresses_each_body_on_its_own() {
        let a = "<p>first page</p>".repeat(500);
        let b = "<p>another page</p>".repeat(300);
        let first = compress(3, a.as_bytes()).unwrap();
        let second = compress(3, b.as_bytes()).unwrap();
        // A level change on the kept context, and back.
        let third = compress(19, a.as_bytes()).unwrap();
        let fourth = compress(3, a.as_bytes()).unwrap();
        assert_eq!(zstd::decode_all(&first[..]).unwrap(), a.as_bytes());
        assert_eq!(zstd::decode_all(&second[..]).unwrap(), b.as_bytes());
        assert_eq!(zstd::decode_all(&third[..]).unwrap(), a.as_bytes());
        assert_eq!(first, fourth, "the same body and level give the same frame");
    }
}
