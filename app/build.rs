//! Link settings for the release build of `kiln-demo` that keep its idle memory small
//! (issue 26): the executable's resident set is mostly its own code, mapped page by page
//! as it runs, and the kernel maps the 64 KiB around each page fault ("fault-around").
//!
//! - `--symbol-ordering-file=hot-functions.txt`: the functions that starting up, `/pong`
//!   and `/pages/tour` run (listed by `scripts/hot-functions`) are laid out together at
//!   the start of `.text`, so those faults fall on a few dense pages instead of all over
//!   the 7.7 MB of code. A name the build no longer has is skipped, so a stale list costs
//!   memory, never a failed link.
//! - `-z pack-relative-relocs`: the position-independent executable's ~20,000 relative
//!   relocations as a compact bitmap (`DT_RELR`, glibc 2.36+) instead of 480 KB of
//!   `.rela.dyn` that the loader reads, and keeps resident, at every start.
//!
//! Both are flags of LLD, which rustc links with on x86_64 Linux since 1.90; with another
//! linker (an older rustc, a `linker` setting) nothing is added and the build is the
//! usual one.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=hot-functions.txt");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    if env::var("PROFILE").as_deref() != Ok("release") || !links_with_rust_lld() {
        return;
    }
    let dir = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={dir}/hot-functions.txt");
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    if glibc_has_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether rustc links this build with its own LLD: the default for
/// `x86_64-unknown-linux-gnu` from rustc 1.90 on, unless a linker is configured.
fn links_with_rust_lld() -> bool {
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker") || flags.contains("link-self-contained") || flags.contains("link-arg") {
        return false;
    }
    if env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some() {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version.split_whitespace().nth(1).and_then(|v| v.split('.').nth(1)).and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}

/// Whether the C library the binary links against reads `DT_RELR` (glibc 2.36 and later:
/// it defines the `GLIBC_ABI_DT_RELR` version, which LLD then makes the binary require, so
/// an older loader refuses it with a clear message instead of running it unrelocated).
fn glibc_has_relr() -> bool {
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    // "glibc 2.36"
    let version = String::from_utf8_lossy(&out.stdout);
    let mut parts = version.split_whitespace().nth(1).unwrap_or("").split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
