//! One compressor per response, over a `Vec<u8>` that collects its output: a whole
//! body at once, or a stream chunk by chunk, each chunk flushed so that what the
//! handler produced reaches the client now (an update, a progress line), not when
//! the compressor's block fills. A whole body in gzip is libdeflate's, in one call
//! ([`super::gzip_bulk`]), a streamed one on a deflate state from the worker's idle
//! ones ([`super::gzip`]); zstd's context for a whole body is the worker's
//! ([`super::zstd_context`]); brotli is C brotli's ([`super::brotli`]), in one call for
//! a whole body.

// With no coding compiled in, `Encoding` and `Encoder` have no value: what takes or
// follows one is unreachable, and the compiler says so of every such line.
#![cfg_attr(
    not(any(feature = "gzip", feature = "brotli", feature = "zstd")),
    allow(unused_variables, unreachable_code)
)]

use std::io;
#[cfg(any(feature = "brotli", feature = "zstd"))]
use std::io::Write;
use std::pin::Pin;
use std::task::{Context, Poll};

#[cfg(feature = "gzip")]
use flate2::FlushCompress;
use futures_core::Stream;
use kiln_http::{BodyStream, Bytes};

use super::Levels;
#[cfg(feature = "gzip")]
use super::gzip::Gzip;
use super::negotiate::Encoding;

/// One variant per coding compiled in; with none, no encoder can be made (nor is one
/// asked for: nothing is negotiated).
pub(crate) enum Encoder {
    #[cfg(feature = "gzip")]
    Gzip(Gzip),
    #[cfg(feature = "brotli")]
    Brotli(Box<brotlic::CompressorWriter<Vec<u8>>>),
    #[cfg(feature = "zstd")]
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl Encoder {
    /// An encoder for a stream, whose output starts with room for `capacity` bytes.
    pub(crate) fn new(encoding: Encoding, levels: &Levels, capacity: usize) -> io::Result<Encoder> {
        match encoding {
            #[cfg(feature = "gzip")]
            Encoding::Gzip => Ok(Encoder::Gzip(Gzip::new(levels.gzip, capacity))),
            #[cfg(feature = "brotli")]
            Encoding::Brotli => Ok(Encoder::Brotli(Box::new(super::brotli::stream(levels.brotli, capacity)?))),
            #[cfg(feature = "zstd")]
            Encoding::Zstd => {
                Ok(Encoder::Zstd(zstd::stream::write::Encoder::new(Vec::with_capacity(capacity), levels.zstd)?))
            }
        }
    }

    // `*self` and `ref mut`: a match on the place, which is exhaustive even when no
    // coding is compiled in and `Encoder` has no variant.
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match *self {
            #[cfg(feature = "gzip")]
            Encoder::Gzip(ref mut e) => e.write(data, FlushCompress::None),
            #[cfg(feature = "brotli")]
            Encoder::Brotli(ref mut e) => e.write_all(data),
            #[cfg(feature = "zstd")]
            Encoder::Zstd(ref mut e) => e.write_all(data),
        }
    }

    /// Ends the current block so that everything written so far can be decoded.
    fn flush(&mut self) -> io::Result<()> {
        match *self {
            #[cfg(feature = "gzip")]
            Encoder::Gzip(ref mut e) => e.write(&[], FlushCompress::Sync),
            #[cfg(feature = "brotli")]
            Encoder::Brotli(ref mut e) => e.flush(),
            #[cfg(feature = "zstd")]
            Encoder::Zstd(ref mut e) => e.flush(),
        }
    }

    /// The output so far, taken out.
    fn take_output(&mut self) -> Vec<u8> {
        match *self {
            #[cfg(feature = "gzip")]
            Encoder::Gzip(ref mut e) => e.take_output(),
            #[cfg(feature = "brotli")]
            Encoder::Brotli(ref mut e) => std::mem::take(e.get_mut()),
            #[cfg(feature = "zstd")]
            Encoder::Zstd(ref mut e) => std::mem::take(e.get_mut()),
        }
    }

    /// Ends the stream (its trailer) and returns the rest of the output.
    pub(crate) fn finish(self) -> io::Result<Vec<u8>> {
        match self {
            #[cfg(feature = "gzip")]
            Encoder::Gzip(e) => e.finish(),
            #[cfg(feature = "brotli")]
            Encoder::Brotli(e) => e.into_inner().map_err(brotlic::IntoInnerError::into_error),
            #[cfg(feature = "zstd")]
            Encoder::Zstd(e) => e.finish(),
        }
    }
}

/// The whole of `body` in `encoding` at its level.
pub(crate) fn compress(encoding: Encoding, levels: &Levels, body: &[u8]) -> io::Result<Vec<u8>> {
    match encoding {
        #[cfg(feature = "gzip")]
        Encoding::Gzip => super::gzip_bulk::compress(levels.gzip, body),
        #[cfg(feature = "zstd")]
        Encoding::Zstd => super::zstd_context::compress(levels.zstd, body),
        #[cfg(feature = "brotli")]
        Encoding::Brotli => super::brotli::compress(levels.brotli, body),
    }
}

/// A streamed body, compressed as it streams: each chunk of the inner stream is
/// compressed and flushed into one chunk out; the end of the inner stream writes the
/// coding's trailer as a last chunk.
pub(crate) struct Compressed {
    inner: BodyStream,
    /// `None` once the trailer is out.
    encoder: Option<Encoder>,
}

impl Compressed {
    pub(crate) fn new(inner: BodyStream, encoder: Encoder) -> Compressed {
        Compressed { inner, encoder: Some(encoder) }
    }
}

impl Stream for Compressed {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            let Some(encoder) = this.encoder.as_mut() else { return Poll::Ready(None) };
            return match this.inner.as_mut().poll_next(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Some(Err(e))) => {
                    this.encoder = None;
                    Poll::Ready(Some(Err(e)))
                }
                Poll::Ready(Some(Ok(chunk))) => {
                    if chunk.is_empty() {
                        continue;
                    }
                    let out = encoder.write_all(&chunk).and_then(|()| encoder.flush()).map(|()| encoder.take_output());
                    match out {
                        // An empty chunk would end a chunked body early.
                        Ok(out) if out.is_empty() => continue,
                        Ok(out) => Poll::Ready(Some(Ok(Bytes::from(out)))),
                        Err(e) => {
                            this.encoder = None;
                            Poll::Ready(Some(Err(e)))
                        }
                    }
                }
                Poll::Ready(None) => {
                    let encoder = this.encoder.take().expect("checked above");
                    match encoder.finish() {
                        Ok(rest) if rest.is_empty() => Poll::Ready(None),
                        Ok(rest) => Poll::Ready(Some(Ok(Bytes::from(rest)))),
                        Err(e) => Poll::Ready(Some(Err(e))),
                    }
                }
            };
        }
    }
}

// The tests turn on every coding (kiln's dev-dependency on itself).
#[cfg(all(test, feature = "brotli", feature = "zstd", feature = "gzip"))]
mod tests {
    use std::collections::VecDeque;
    use std::io::Write;

    use super::*;

    /// A stream that yields its chunks in order, `Pending` where a `None` stands: the
    /// handler has not produced the next one yet.
    struct Script(VecDeque<Option<&'static str>>);

    impl Stream for Script {
        type Item = io::Result<Bytes>;
        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            match self.0.pop_front() {
                Some(Some(chunk)) => Poll::Ready(Some(Ok(Bytes::from_static(chunk.as_bytes())))),
                Some(None) => Poll::Pending,
                None => Poll::Ready(None),
            }
        }
    }

    fn poll(stream: &mut Compressed) -> Poll<Option<io::Result<Bytes>>> {
        Pin::new(stream).poll_next(&mut Context::from_waker(std::task::Waker::noop()))
    }

    /// A decoder fed piece by piece, with what it decoded so far.
    enum Decoder {
        Gzip(Box<flate2::write::GzDecoder<Vec<u8>>>),
        Brotli(Box<brotlic::DecompressorWriter<Vec<u8>>>),
        Zstd(zstd::stream::write::Decoder<'static, Vec<u8>>),
    }

    impl Decoder {
        fn new(encoding: Encoding) -> Decoder {
            match encoding {
                Encoding::Gzip => Decoder::Gzip(Box::new(flate2::write::GzDecoder::new(Vec::new()))),
                Encoding::Brotli => Decoder::Brotli(Box::new(brotlic::DecompressorWriter::new(Vec::new()))),
                Encoding::Zstd => Decoder::Zstd(zstd::stream::write::Decoder::new(Vec::new()).unwrap()),
            }
        }

        fn feed(&mut self, bytes: &[u8]) -> String {
            let out = match self {
                Decoder::Gzip(d) => {
                    d.write_all(bytes).unwrap();
                    d.flush().unwrap();
                    d.get_ref()
                }
                Decoder::Brotli(d) => {
                    d.write_all(bytes).unwrap();
                    d.flush().unwrap();
                    d.get_ref()
                }
                Decoder::Zstd(d) => {
                    d.write_all(bytes).unwrap();
                    d.flush().unwrap();
                    d.get_ref()
                }
            };
            String::from_utf8(out.clone()).unwrap()
        }
    }

    #[test]
    fn each_chunk_decodes_before_the_next_is_produced() {
        for encoding in [Encoding::Gzip, Encoding::Brotli, Encoding::Zstd] {
            let script = Script(VecDeque::from([Some("data: one\n\n"), None, Some("data: two\n\n"), None]));
            let encoder = Encoder::new(encoding, &Levels::default(), 0).unwrap();
            let mut stream = Compressed::new(Box::pin(script), encoder);
            let mut decoder = Decoder::new(encoding);
            let Poll::Ready(Some(Ok(first))) = poll(&mut stream) else { panic!("{encoding:?}: no first chunk") };
            assert_eq!(decoder.feed(&first), "data: one\n\n", "{encoding:?}");
            assert!(poll(&mut stream).is_pending());
            let Poll::Ready(Some(Ok(second))) = poll(&mut stream) else { panic!("{encoding:?}: no second chunk") };
            assert_eq!(decoder.feed(&second), "data: one\n\ndata: two\n\n", "{encoding:?}");
            assert!(poll(&mut stream).is_pending());
            // The end: the coding's trailer, then nothing.
            let mut rest = Vec::new();
            while let Poll::Ready(Some(chunk)) = poll(&mut stream) {
                let chunk = chunk.unwrap();
                assert!(!chunk.is_empty());
                rest.extend_from_slice(&chunk);
            }
            assert_eq!(decoder.feed(&rest), "data: one\n\ndata: two\n\n", "{encoding:?}");
        }
    }

    #[test]
    fn whole_bodies_round_trip_in_every_coding_and_size() {
        let page: String = (0..3000).map(|i| format!("<li>item {i}</li>")).collect();
        for len in [0, 1, 700, 1009, 20_000, page.len()] {
            let body = &page.as_bytes()[..len];
            for encoding in [Encoding::Gzip, Encoding::Brotli, Encoding::Zstd] {
                let compressed = compress(encoding, &Levels::default(), body);
                let mut decoder = Decoder::new(encoding);
                let text = decoder.feed(&compressed.unwrap());
                assert_eq!(text.as_bytes(), body, "{encoding:?} {len}");
            }
        }
    }
}
