//! Restart without dropping a connection: on `SIGUSR2` the running process starts its
//! own executable again, with the same arguments, handing it the listening sockets
//! themselves (not their addresses). Once the new process reports that its workers are
//! serving, the old one stops accepting and drains. The accept queues belong to the
//! sockets, which never close, so a connection waiting in one is accepted by whichever
//! process gets to it first and none is reset.
//!
//! Not `SO_REUSEPORT` overlap (a new process binding the same port beside the old): the
//! kernel hashes each connection to one listener, and the connections queued on a
//! listener when it closes are reset, so the old process closing its listeners would
//! lose every connection queued on them.
//!
//! The new process is told by its environment: [`KILN_LISTEN_FDS`] lists the
//! descriptors and [`KILN_LISTEN_PPID`] names the parent, and [`KILN_HANDOVER_NOTIFY`]
//! the datagram socket to send `READY=1` to. It also says `READY=1` and its `MAINPID` to
//! systemd's `NOTIFY_SOCKET`, so that a `Type=notify` service follows the new process.

use std::io;
use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixDatagram};
use std::process::Command;
use std::time::Duration;

use crate::listeners::{KILN_LISTEN_FDS, KILN_LISTEN_PPID, inheritable};

/// The abstract socket name a new process reports `READY=1` to.
pub(crate) const KILN_HANDOVER_NOTIFY: &str = "KILN_HANDOVER_NOTIFY";
/// How long the old process waits for the new one to report ready before it gives up,
/// stops the new one and goes on serving.
pub(crate) const HANDOVER_TIMEOUT: Duration = Duration::from_secs(30);
/// How often the old process looks whether the new one has exited while waiting.
const CHILD_POLL: Duration = Duration::from_millis(20);

/// Starts the new process with `listeners` and waits until it reports ready: `Ok` means
/// the caller should drain and exit; on `Err` the new process is stopped (if it runs)
/// and the caller goes on serving.
pub(crate) async fn hand_over(listeners: &[TcpListener]) -> io::Result<u32> {
    let name = format!("kiln-handover-{}-{}", std::process::id(), nanos());
    let notify = UnixDatagram::bind_addr(&UnixAddr::from_abstract_name(name.as_bytes())?)?;
    notify.set_nonblocking(true)?;
    let notify = tokio::net::UnixDatagram::from_std(notify)?;
    let mut args = std::env::args_os();
    // argv[0], not /proc/self/exe: a deploy replaces the file at that path, and the new
    // process must be the new executable.
    let exe = args.next().ok_or_else(|| io::Error::other("no argv[0] to start again"))?;
    let (copies, fds) = inheritable(listeners)?;
    let spawned = Command::new(&exe)
        .args(args)
        .env(KILN_LISTEN_FDS, fds)
        .env(KILN_LISTEN_PPID, std::process::id().to_string())
        .env(KILN_HANDOVER_NOTIFY, &name)
        .env_remove("LISTEN_FDS")
        .env_remove("LISTEN_PID")
        .env_remove("LISTEN_FDNAMES")
        .spawn();
    drop(copies);
    let mut child = spawned?;
    let mut buf = [0u8; 64];
    let waited = tokio::time::timeout(HANDOVER_TIMEOUT, async {
        loop {
            tokio::select! {
                got = notify.recv(&mut buf) => if buf[..got?].starts_with(b"READY=1") { return Ok(()) },
                _ = tokio::time::sleep(CHILD_POLL) => if let Some(status) = child.try_wait()? {
                    return Err(io::Error::other(format!("the new process exited before it was ready: {status}")));
                },
            }
        }
    })
    .await
    .unwrap_or_else(|_| Err(io::Error::other("the new process did not report ready in time")));
    match waited {
        Ok(()) => Ok(child.id()),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

/// Tells whoever waits for this process that its workers are serving: the kiln
/// process it takes over from, and systemd (`Type=notify`).
pub(crate) fn notify_ready() {
    let pid = std::process::id();
    if let Ok(path) = std::env::var("NOTIFY_SOCKET") {
        let message = format!("READY=1\nMAINPID={pid}\n");
        let addr = match path.strip_prefix('@') {
            Some(name) => UnixAddr::from_abstract_name(name.as_bytes()),
            None => UnixAddr::from_pathname(&path),
        };
        send(addr, message.as_bytes());
    }
    // After systemd: by the time the old process hears this and exits, systemd already
    // follows the new one, and does not take the old one's exit for the service's.
    if let Ok(name) = std::env::var(KILN_HANDOVER_NOTIFY) {
        send(UnixAddr::from_abstract_name(name.as_bytes()), b"READY=1");
    }
}

fn send(addr: io::Result<UnixAddr>, message: &[u8]) {
    if let (Ok(addr), Ok(socket)) = (addr, UnixDatagram::unbound()) {
        let _ = socket.send_to_addr(message, &addr);
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}
