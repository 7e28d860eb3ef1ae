//! A response body on an HTTP/2 stream, sent as the peer's flow-control windows allow
//! (RFC 9113 §5.2): each piece waits for capacity, so the `h2` crate never holds more
//! of a body than the peer has room for, and a peer that opens no window within the
//! body timeout gets its stream reset (`RST_STREAM(CANCEL)`).

use std::fs::File;
use std::future::poll_fn;
use std::os::unix::fs::FileExt;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use h2::{Reason, SendStream};
use tokio::time::timeout;

use super::meter::Meter;
use crate::response::BodyStream;

/// Most bytes of a file read for one piece.
const FILE_PIECE: usize = 64 * 1024;

/// The stream ended before the body did: reset by the peer, the connection gone, or
/// reset by us for a stall or a failed body.
pub(super) struct Gone;

impl From<h2::Error> for Gone {
    fn from(_: h2::Error) -> Self {
        Gone
    }
}

/// Sends `bytes`, ending the stream after them when `last`.
pub(super) async fn bytes(out: &mut Out<'_>, mut bytes: Bytes, last: bool) -> Result<(), Gone> {
    while !bytes.is_empty() {
        let room = out.capacity(bytes.len()).await?;
        let piece = bytes.split_to(room.min(bytes.len()));
        out.meter.payload(piece.len());
        out.stream.send_data(piece, last && bytes.is_empty())?;
    }
    Ok(())
}

/// Sends `len` bytes of `file` from `offset`, read in bounded pieces as the window opens
/// (no `sendfile(2)`: HTTP/2 frames the bytes), then ends the stream.
pub(super) async fn file(out: &mut Out<'_>, file: &File, mut offset: u64, mut len: u64) -> Result<(), Gone> {
    while len > 0 {
        let want = len.min(FILE_PIECE as u64) as usize;
        let room = out.capacity(want).await?;
        let mut piece = vec![0; room.min(want)];
        let read = match file.read_at(&mut piece, offset) {
            Ok(0) | Err(_) => return Err(fail(out.stream)),
            Ok(read) => read,
        };
        piece.truncate(read);
        offset += read as u64;
        len -= read as u64;
        out.meter.payload(read);
        out.stream.send_data(Bytes::from(piece), len == 0)?;
    }
    Ok(())
}

/// Sends a streamed body chunk by chunk as it is produced; the next chunk is asked for
/// only once the last one has room, so a slow reader slows the producer.
pub(super) async fn stream(out: &mut Out<'_>, mut body: BodyStream) -> Result<(), Gone> {
    loop {
        let next = poll_fn(|cx| {
            if out.stream.poll_reset(cx).is_ready() {
                return Poll::Ready(Err(Gone));
            }
            body.as_mut().poll_next(cx).map(Ok)
        })
        .await?;
        match next {
            None => return Ok(out.stream.send_data(Bytes::new(), true)?),
            Some(Err(_)) => return Err(fail(out.stream)),
            Some(Ok(chunk)) if chunk.is_empty() => {}
            Some(Ok(chunk)) => bytes(out, chunk, false).await?,
        }
    }
}

/// Where a body goes: the stream, the connection's meter (a response's bytes count
/// as what the peer asked for), and how long a wait for the window may last.
pub(super) struct Out<'a> {
    pub(super) stream: &'a mut SendStream<Bytes>,
    pub(super) meter: &'a Meter,
    pub(super) stall: Duration,
}

impl Out<'_> {
    /// Waits until the stream may send some of `want` bytes; how many it may.
    async fn capacity(&mut self, want: usize) -> Result<usize, Gone> {
        self.stream.reserve_capacity(want);
        loop {
            let room = self.stream.capacity();
            if room > 0 {
                return Ok(room);
            }
            match timeout(self.stall, poll_fn(|cx| self.stream.poll_capacity(cx))).await {
                Ok(Some(Ok(_))) => {}
                Ok(Some(Err(_)) | None) => return Err(Gone),
                Err(_) => {
                    self.stream.send_reset(Reason::CANCEL);
                    return Err(Gone);
                }
            }
        }
    }
}

/// Ends a stream whose body failed midway: the peer must not take the part sent for
/// the whole (RFC 9113 §8.1: a reset stream's response is incomplete).
fn fail(stream: &mut SendStream<Bytes>) -> Gone {
    stream.send_reset(Reason::INTERNAL_ERROR);
    Gone
}
