//! A server binary run by a test, on a port of its own, killed when dropped.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::http::{Reply, get};

/// A running server, killed when dropped.
#[derive(Debug)]
pub struct Server {
    /// Its process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Server {
    /// Runs `binary` with `--listen 127.0.0.1:0` and `args`, and waits for the line
    /// `... listening on http://ADDR` (or `https://ADDR`) on its standard output.
    pub fn start(binary: impl AsRef<Path>, args: &[&str]) -> Server {
        let mut child = Command::new(binary.as_ref())
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let addr = loop {
            let line = match lines.next() {
                Some(Ok(line)) => line,
                _ => {
                    let status = child.wait().expect("wait");
                    panic!("the server exited before listening: {status}");
                }
            };
            let after = |scheme: &str| line.split(scheme).nth(1).map(str::to_owned);
            if let Some(addr) = after("listening on http://").or_else(|| after("listening on https://")) {
                break addr.trim().parse().expect("address");
            }
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Server { child, addr }
    }

    /// `GET target`, panicking on a connection error.
    pub fn get(&self, target: &str) -> Reply {
        get(self.addr, target).unwrap_or_else(|e| panic!("GET {target}: {e}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
