//! One compressor per response, over a `Vec<u8>` that collects its output: a whole
//! body at once, or a stream chunk by chunk, each chunk flushed so that what the
//! handler produced reaches the client now (an update, a progress line), not when
//! the compressor's block fills. A whole body in gzip is libdeflate's, in one call
//! ([`super::gzip_bulk`]), a streamed one on a deflate state from the worker's idle
//! ones ([`super::gzip`]); zstd's context for a whole body is the worker's
//! ([`super::zstd_context`]); brotli is C brotli's ([`super::brotli`]), in one call for
//! a whole body.

use std::io::{self, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use flate2::FlushCompress;
use futures_core::Stream;
use kiln_http::{BodyStream, Bytes};

use super::Levels;
use super::gzip::Gzip;
use super::negotiate::Encoding;

pub(crate) enum Encoder {
    Gzip(Gzip),
    Brotli(Box<brotlic::CompressorWriter<Vec<u8>>>),
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
}

impl Encoder {
    /// An encoder for a stream, whose output starts with room for `capacity` bytes.
    pub(crate) fn new(encoding: Encoding, levels: &Levels, capacity: usize) -> io::Result<Encoder> {
        Ok(match encoding {
            Encoding::Gzip => Encoder::Gzip(Gzip::new(levels.gzip, capacity)),
            Encoding::Brotli => Encoder::Brotli(Box::new(super::brotli::stream(levels.brotli, capacity)?)),
            Encoding::Zstd => {
                Encoder::Zstd(zstd::stream::write::Encoder::new(Vec::with_capacity(capacity), levels.zstd)?)
            }
        })
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Encoder::Gzip(e) => e.write(data, FlushCompress::None),
            Encoder::Brotli(e) => e.write_all(data),
            Encoder::Zstd(e) => e.write_all(data),
        }
    }

    /// Ends the current block so that everything written so far can be decoded.
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Encoder::Gzip(e) => e.write(&[], FlushCompress::Sync),
            Encoder::Brotli(e) => e.flush(),
            Encoder::Zstd(e) => e.flush(),
        }
    }

    /// The output so far, taken out.
    fn take_output(&mut self) -> Vec<u8> {
        let out = match self {
            Encoder::Gzip(e) => return e.take_output(),
            Encoder::Brotli(e) => e.get_mut(),
            Encoder::Zstd(e) => e.get_mut(),
        };
        std::mem::take(out)
    }

    /// Ends the stream (its trailer) and returns the rest of the output.
    pub(crate) fn finish(self) -> io::Result<Vec<u8>> {
        match self {
            Encoder::Gzip(e) => e.finish(),
            Encoder::Brotli(e) => e.into_inner().map_err(brotlic::IntoInnerError::into_error),
            Encoder::Zstd(e) => e.finish(),
        }
    }
}

/// The whole of `body` in `encoding` at its level.
pub(crate) fn compress(encoding: Encoding, levels: &Levels, body: &[u8]) -> io::Result<Vec<u8>> {
    match encoding {
        Encoding::Gzip => super::gzip_bulk::compress(levels.gzip, body),
        Encoding::Zstd => super::zstd_context::compress(levels.zstd, body),
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

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

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
