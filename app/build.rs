//! Link settings for the release build of `kiln-demo` that keep its idle memory small
//! (issue 26): the executable's resident set is mostly its own code, mapped page by page
//! as it runs, and the kernel maps the 64 KiB around each page fault ("fault-around").
//!
//! - `hot-functions.txt`: the functions that starting up, `/pong` and `/pages/tour` run
//!   (listed by `scripts/hot-functions`) are laid out together at the start of `.text`, so
//!   those faults fall on a few dense pages instead of all over the 7.5 MB of code. Names
//!   the build no longer has (their hashes change with the crates' dependencies and the
//!   compiler) are matched again with the hashes as `*`, right after; a name that matches
//!   nothing is skipped, so a stale list costs memory, never a failed link. It reaches
//!   the linker as a script of `INSERT BEFORE .init`, which adds to the default layout.
//!   The code stays in the one `.text` section: valgrind, for one, reads only the symbols
//!   inside it.
//! - `-z pack-relative-relocs`: the position-independent executable's ~20,000 relative
//!   relocations as a compact bitmap (`DT_RELR`, glibc 2.36+) instead of 480 KB of
//!   `.rela.dyn` that the loader reads, and keeps resident, at every start.
//!
//! Both are flags of LLD, which rustc links with on x86_64 Linux since 1.90; with another
//! linker (an older rustc, a `linker` setting) nothing is added and the build is the
//! usual one.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=hot-functions.txt");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    if env::var("PROFILE").as_deref() != Ok("release") || !links_with_rust_lld() {
        return;
    }
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let list = fs::read_to_string(dir.join("hot-functions.txt")).expect("app/hot-functions.txt");
    let script = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("hot-text.ld");
    fs::write(&script, linker_script(&list)).expect("writing the linker script into OUT_DIR");
    println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    if glibc_has_relr() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// An LLD script that puts the listed functions' sections (`.text.NAME`, or
/// `.text.unlikely.NAME` for a cold one, as rustc and the C compiler name them with one
/// section per function) first in `.text`; then the sections that match a name with its
/// build hashes as `*` (see `glob`): a function renamed since the list was made (its
/// crate's dependencies changed, or the compiler) still lands near the others, beside the
/// other instances of the same generic function. The rest of the code follows, as the
/// linker places it by default (sections named `.text.*` join the output section `.text`).
/// A line with a character a mangled name does not have is left out: it would break the
/// script.
fn linker_script(list: &str) -> String {
    let names: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.$".contains(&b)))
        .collect();
    let mut globs: Vec<String> = names.iter().map(|n| glob(n)).collect();
    globs.sort();
    globs.dedup();
    let mut script = String::from("SECTIONS {\n  .text : {\n");
    for name in &names {
        script.push_str(&format!("    *(.text.{name} .text.unlikely.{name})\n"));
    }
    for name in &globs {
        script.push_str(&format!("    *(.text.{name} .text.unlikely.{name})\n"));
    }
    // `.init` (glibc's crti.o) follows `.text` in the default layout.
    script.push_str("  }\n}\nINSERT BEFORE .init;\n");
    script
}

/// `name` with what one build does not share with the next replaced by `*`: the hash of
/// a legacy-mangled Rust name (`17h`, 16 hex digits, `E`: it changes with the crate's
/// dependencies and the compiler), a v0-mangled name's crate disambiguators (`Cs..._`
/// before the crate name's length), and the numbers compilers append to local symbols
/// (`.1234`, `.llvm.1234`, `.constprop.0`).
fn glob(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.len() >= 20
            && rest.starts_with(b"17h")
            && rest[3..19].iter().all(u8::is_ascii_hexdigit)
            && rest[19] == b'E'
        {
            out.push_str("17h*E");
            i += 20;
            continue;
        }
        if rest.starts_with(b"Cs") {
            let end = 2 + rest[2..].iter().take_while(|c| c.is_ascii_alphanumeric()).count();
            if end > 2 && rest.get(end) == Some(&b'_') && rest.get(end + 1).is_some_and(u8::is_ascii_digit) {
                out.push_str("Cs*_");
                i += end + 1;
                continue;
            }
        }
        if rest[0] == b'.' {
            let end = 1 + rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if end > 1 && matches!(rest.get(end), None | Some(b'.')) {
                out.push_str(".*");
                i += end;
                continue;
            }
        }
        out.push(char::from(rest[0]));
        i += 1;
    }
    out
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
