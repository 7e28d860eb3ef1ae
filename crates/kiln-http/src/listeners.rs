//! The listening sockets: bound here with `SO_REUSEPORT`, one per worker, or inherited
//! from whoever started this process — systemd socket activation (`LISTEN_FDS`,
//! `LISTEN_PID`, descriptors from 3 on) or the kiln process this one takes over from
//! (`KILN_LISTEN_FDS`, see [`crate::handover`]). An inherited socket keeps its accept
//! queue, so no connection waiting in it is lost across a restart.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use socket2::{Domain, Protocol, Socket, Type};

/// Pending connections the kernel queues per listener before refusing more.
const LISTEN_BACKLOG: i32 = 4096;
/// The first descriptor systemd passes (`SD_LISTEN_FDS_START`).
const SD_LISTEN_FDS_START: RawFd = 3;
/// The descriptor numbers of the listeners a kiln process hands over, comma-separated.
pub(crate) const KILN_LISTEN_FDS: &str = "KILN_LISTEN_FDS";
/// The pid of the process that handed them over: a grandchild that inherits the
/// environment but not the sockets sees another parent and ignores them.
pub(crate) const KILN_LISTEN_PPID: &str = "KILN_LISTEN_PPID";
/// Inherited descriptors are owned once per process, by the first server that asks.
static TAKEN: AtomicBool = AtomicBool::new(false);

/// One listener per worker: inherited ones when this process was given any, else bound
/// to `addr` (the first one's port is reused, so port 0 gives every worker the same).
/// With fewer inherited sockets than workers, workers share them; with more, there is
/// a worker for each, so that no queue is left unserved.
pub(crate) fn open(addr: io::Result<SocketAddr>, workers: usize) -> io::Result<Vec<TcpListener>> {
    let inherited = inherited()?;
    if !inherited.is_empty() {
        let mut listeners = Vec::with_capacity(workers.max(inherited.len()));
        for i in 0..workers.max(inherited.len()) {
            listeners.push(match inherited.get(i) {
                Some(l) => l.try_clone()?,
                None => inherited[i % inherited.len()].try_clone()?,
            });
        }
        return Ok(listeners);
    }
    let addr = addr?;
    refuse_if_taken(addr)?;
    let first = bind(addr)?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..workers {
        listeners.push(bind(addr)?);
    }
    Ok(listeners)
}

/// Fails with `AddrInUse` when another socket listens on `addr`. `SO_REUSEPORT` alone
/// would let a second process of the same user bind beside a running one, and the kernel
/// would then split new connections between the two without a word: a forgotten old
/// server answering every other request. A bind without it is refused by any listener,
/// so one is tried first, and closed. Port 0 asks for a fresh port: nothing to check.
fn refuse_if_taken(addr: SocketAddr) -> io::Result<()> {
    if addr.port() == 0 {
        return Ok(());
    }
    let probe = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // As `bind` below: a port whose old connections linger in TIME_WAIT is free.
    probe.set_reuse_address(true)?;
    match probe.bind(&addr.into()) {
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("{addr} is already in use: another process listens on it"),
        )),
        other => other,
    }
}

fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    // Every worker binds its own listener to the same port; the kernel spreads new
    // connections across them, so workers never contend for an accept queue.
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// The descriptor numbers this process was given, by systemd or by a kiln parent.
fn inherited_fds() -> Vec<RawFd> {
    let var = |name| std::env::var(name).ok();
    let me = std::process::id().to_string();
    if var("LISTEN_PID").as_deref() == Some(me.as_str()) {
        let n = var("LISTEN_FDS").and_then(|n| n.parse::<RawFd>().ok()).unwrap_or(0);
        return (SD_LISTEN_FDS_START..SD_LISTEN_FDS_START + n.max(0)).collect();
    }
    let parent = std::os::unix::process::parent_id().to_string();
    if var(KILN_LISTEN_PPID).as_deref() == Some(parent.as_str()) {
        let fds = var(KILN_LISTEN_FDS).unwrap_or_default();
        return fds.split(',').filter_map(|fd| fd.parse().ok()).filter(|fd| *fd > 2).collect();
    }
    Vec::new()
}

/// Takes ownership of the inherited listeners, once per process. Each must be a
/// listening stream socket, or starting fails with a clear error.
fn inherited() -> io::Result<Vec<TcpListener>> {
    let fds = inherited_fds();
    if fds.is_empty() || TAKEN.swap(true, Ordering::SeqCst) {
        return Ok(Vec::new());
    }
    fds.into_iter().map(adopt).collect()
}

#[allow(unsafe_code)]
fn adopt(fd: RawFd) -> io::Result<TcpListener> {
    // SAFETY: `fcntl(F_GETFD)` reads flags of any number and touches no memory.
    let open = unsafe { nix::libc::fcntl(fd, nix::libc::F_GETFD) } != -1;
    if !open {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("inherited descriptor {fd} is not open")));
    }
    // SAFETY: the descriptor is open, and the environment hands it to this process
    // alone (`LISTEN_PID` is our pid, or `KILN_LISTEN_PPID` our parent's); `TAKEN`
    // makes this the only owner in the process, so it is closed once.
    let socket = Socket::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let listening = socket.r#type().ok() == Some(Type::STREAM) && socket.is_listener().unwrap_or(false);
    if !listening {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("inherited descriptor {fd} is not a listening TCP socket"),
        ));
    }
    // Nothing this process starts inherits it, but for a hand-over (which asks).
    socket.set_cloexec(true)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Copies of `listeners` that a child process inherits, and their numbers for
/// [`KILN_LISTEN_FDS`]. Dropping the copies closes them in this process only.
pub(crate) fn inheritable(listeners: &[TcpListener]) -> io::Result<(Vec<Socket>, String)> {
    let mut copies = Vec::with_capacity(listeners.len());
    let mut numbers = Vec::with_capacity(listeners.len());
    for l in listeners {
        let copy = Socket::from(l.try_clone()?);
        copy.set_cloexec(false)?;
        numbers.push(copy.as_raw_fd().to_string());
        copies.push(copy);
    }
    Ok((copies, numbers.join(",")))
}
