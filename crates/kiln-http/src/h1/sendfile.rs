//! Sending a file range. On plain TCP with `sendfile(2)`: the kernel copies from the
//! page cache to the socket, and the file never passes through our memory. Over TLS
//! the bytes must be encrypted first, so the file is read in bounded chunks and
//! written through the transport; never buffered whole.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::TcpStream;

use crate::transport::{Transport, send_all_held};

/// Most bytes handed to one `sendfile` call, so that one large file does not hold the
/// worker's thread for long.
const SENDFILE_CHUNK: usize = 1 << 20;
/// Bytes read from a file per write when it cannot be sent with `sendfile`: one full
/// TLS record (RFC 8446 §5.1 caps a record's plaintext at 2^14 bytes).
const COPY_CHUNK: usize = 16 * 1024;

/// Sends `len` bytes of `file` from `offset`. `Ok(false)`: the client accepted nothing
/// for `stall` (a slow reader that keeps reading is never cut off).
pub(crate) async fn send_file(
    stream: &TcpStream,
    file: &File,
    mut offset: u64,
    len: u64,
    stall: Duration,
) -> io::Result<bool> {
    let end = offset + len;
    while offset < end {
        match tokio::time::timeout(stall, stream.writable()).await {
            Ok(ready) => ready?,
            Err(_) => return Ok(false),
        }
        let count = ((end - offset) as usize).min(SENDFILE_CHUNK);
        let sent = stream.try_io(Interest::WRITABLE, || {
            let mut off = offset as nix::libc::off_t;
            nix::sys::sendfile::sendfile(stream, file, Some(&mut off), count).map_err(io::Error::from)
        });
        match sent {
            // The file shrank after its length was promised: the response cannot be
            // completed, so the connection must end.
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => offset += n as u64,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Sends `len` bytes of `file` from `offset` through `out`, `COPY_CHUNK` bytes at a
/// time, read into `scratch` (left holding at most one chunk). Each chunk must be
/// taken within `stall`; `Ok(false)` otherwise.
pub(crate) async fn copy_file<T: Transport>(
    out: &mut T,
    scratch: &mut Vec<u8>,
    file: &File,
    mut offset: u64,
    len: u64,
    stall: Duration,
) -> io::Result<bool> {
    let end = offset + len;
    while offset < end {
        let count = ((end - offset) as usize).min(COPY_CHUNK);
        scratch.resize(count, 0);
        // Read on the worker's thread, as `sendfile` does: static files come from the
        // page cache.
        let n = file.read_at(scratch, offset)?;
        if n == 0 {
            // The file shrank after its length was promised.
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        match tokio::time::timeout(stall, out.write_all(&scratch[..n])).await {
            Ok(written) => written?,
            Err(_) => return Ok(false),
        }
        offset += n as u64;
    }
    send_all_held(out, stall).await
}
