//! Sending a file range with `sendfile(2)`: the kernel copies from the page cache to
//! the socket, and the file never passes through our memory.

use std::fs::File;
use std::io;
use std::time::Duration;

use tokio::io::Interest;
use tokio::net::TcpStream;

/// Most bytes handed to one `sendfile` call, so that one large file does not hold the
/// worker's thread for long.
const SENDFILE_CHUNK: usize = 1 << 20;

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
