//! The per-worker cache of files: their bytes when small, their header lines always.
//!
//! Each worker builds its own service and so its own cache: no lock, no atomic. An
//! entry is checked against the file system at most once per interval
//! ([`REVALIDATE_EVERY`] unless [`StaticDir::revalidate_every`] says otherwise; one
//! `stat` per coding), so a hit costs a hash lookup and no system call.
//!
//! [`StaticDir::revalidate_every`]: super::StaticDir::revalidate_every The
//! cache is bounded both in bytes and in entries; when full, entries not used since
//! the last eviction go first (a second-chance sweep), then any.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::mime::content_type;
use super::representation::{Coding, LoadRules, Representation, Stamp};
use super::resolve::PathRefusal;

/// How long a cached entry is trusted before the file system is asked again, unless
/// [`StaticDir::revalidate_every`](super::StaticDir::revalidate_every) sets another
/// interval.
pub const REVALIDATE_EVERY: Duration = Duration::from_secs(1);

/// A file and its precompressed siblings.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The path as requested (below the root, not canonical), to notice a file
    /// replaced by a symlink.
    requested: PathBuf,
    pub(crate) identity: Representation,
    pub(crate) brotli: Option<Representation>,
    pub(crate) gzip: Option<Representation>,
    checked: Cell<Instant>,
    used: Cell<bool>,
}

impl Entry {
    /// Loads `requested` and its siblings from disk and renders their headers.
    pub(crate) fn load(requested: PathBuf, rules: &LoadRules, now: Instant) -> Result<Entry, PathRefusal> {
        let mut identity = Representation::load(&requested, rules)?;
        let sibling = |coding: Coding| Representation::load(&sibling_path(&requested, coding), rules).ok();
        let (mut brotli, mut gzip) = (sibling(Coding::Brotli), sibling(Coding::Gzip));
        let vary = brotli.is_some() || gzip.is_some();
        let ctype = content_type(&requested);
        identity.render(&ctype, Coding::Identity, vary, rules);
        if let Some(r) = brotli.as_mut() {
            r.render(&ctype, Coding::Brotli, vary, rules);
        }
        if let Some(r) = gzip.as_mut() {
            r.render(&ctype, Coding::Gzip, vary, rules);
        }
        Ok(Entry { requested, identity, brotli, gzip, checked: Cell::new(now), used: Cell::new(true) })
    }

    /// Whether every coding is still the version loaded (or still absent).
    fn unchanged(&self) -> bool {
        let same = |rep: &Option<Representation>, coding: Coding| {
            Stamp::current(&sibling_path(&self.requested, coding)) == rep.as_ref().map(|r| r.stamp)
        };
        Stamp::current(&self.requested) == Some(self.identity.stamp)
            && same(&self.brotli, Coding::Brotli)
            && same(&self.gzip, Coding::Gzip)
    }

    fn memory(&self) -> usize {
        let sibling = |r: &Option<Representation>| r.as_ref().map_or(0, Representation::memory);
        self.identity.memory() + sibling(&self.brotli) + sibling(&self.gzip) + self.requested.as_os_str().len()
    }
}

fn sibling_path(path: &Path, coding: Coding) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(coding.suffix());
    PathBuf::from(s)
}

/// The cache of one worker.
#[derive(Debug)]
pub(crate) struct Cache {
    entries: HashMap<Box<str>, Rc<Entry>>,
    bytes: usize,
    max_bytes: usize,
    max_entries: usize,
    revalidate_every: Duration,
}

impl Cache {
    pub(crate) fn new(max_bytes: usize, max_entries: usize, revalidate_every: Duration) -> Cache {
        Cache { entries: HashMap::new(), bytes: 0, max_bytes, max_entries, revalidate_every }
    }

    /// The entry for the clean relative path `key`, loaded or revalidated as needed.
    pub(crate) fn get(&mut self, key: &str, rules: &LoadRules, now: Instant) -> Result<Rc<Entry>, PathRefusal> {
        if let Some(entry) = self.entries.get(key) {
            let fresh = now.saturating_duration_since(entry.checked.get()) < self.revalidate_every;
            if fresh || entry.unchanged() {
                if !fresh {
                    entry.checked.set(now);
                }
                entry.used.set(true);
                return Ok(Rc::clone(entry));
            }
            self.remove(key);
        }
        let entry = Rc::new(Entry::load(rules.root.join(key), rules, now)?);
        let size = entry.memory();
        // An entry larger than the whole cache is served but not kept: keeping it would
        // evict everything else.
        if size <= self.max_bytes {
            self.bytes += size;
            self.entries.insert(key.into(), Rc::clone(&entry));
            self.evict_until_fits(key);
        }
        Ok(entry)
    }

    /// Drops the entry for `key`, as when a large file turned out to have changed.
    pub(crate) fn remove(&mut self, key: &str) {
        if let Some(old) = self.entries.remove(key) {
            self.bytes -= old.memory();
        }
    }

    /// Evicts entries (never `keep`) until the bounds hold, preferring those not
    /// used since the last sweep.
    fn evict_until_fits(&mut self, keep: &str) {
        for second_chance in [true, false] {
            if self.fits() {
                return;
            }
            let victims: Vec<Box<str>> = self
                .entries
                .iter()
                .filter(|(k, e)| &***k != keep && !(second_chance && e.used.replace(false)))
                .map(|(k, _)| k.clone())
                .collect();
            for k in victims {
                if self.fits() {
                    return;
                }
                self.remove(&k);
            }
        }
    }

    fn fits(&self) -> bool {
        self.bytes <= self.max_bytes && self.entries.len() <= self.max_entries
    }

    /// Bytes held, for tests and metrics.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kiln-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    fn rules(root: &Path) -> LoadRules {
        LoadRules {
            root: root.to_path_buf(),
            max_cached_file: 1024,
            follow_symlinks_out: false,
            allow_dotfiles: false,
            cache_control: None,
        }
    }

    #[test]
    fn a_hit_within_the_second_does_not_look_at_the_disk() {
        let root = fixture("hit");
        std::fs::write(root.join("a.txt"), "one").unwrap();
        let (rules, mut cache, t0) = (rules(&root), Cache::new(1 << 20, 16, REVALIDATE_EVERY), Instant::now());
        assert_eq!(cache.get("a.txt", &rules, t0).unwrap().identity.body.as_deref(), Some(&b"one"[..]));
        std::fs::remove_file(root.join("a.txt")).unwrap();
        let soon = t0 + Duration::from_millis(500);
        assert!(cache.get("a.txt", &rules, soon).is_ok(), "trusted within the second");
        let later = t0 + REVALIDATE_EVERY + Duration::from_millis(1);
        assert_eq!(cache.get("a.txt", &rules, later).unwrap_err(), PathRefusal::NotFound);
        assert_eq!((cache.len(), cache.bytes()), (0, 0));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn the_cache_stays_within_its_bounds() {
        let root = fixture("bounds");
        for i in 0..20 {
            std::fs::write(root.join(format!("{i}.txt")), vec![b'x'; 500]).unwrap();
        }
        let (rules, now) = (rules(&root), Instant::now());
        let mut cache = Cache::new(4096, 100, REVALIDATE_EVERY);
        for i in 0..20 {
            let entry = cache.get(&format!("{i}.txt"), &rules, now).unwrap();
            assert_eq!(entry.identity.body.as_ref().map(|b| b.len()), Some(500));
            assert!(cache.bytes() <= 4096, "{} bytes held", cache.bytes());
        }
        let mut few = Cache::new(1 << 20, 3, REVALIDATE_EVERY);
        for i in 0..20 {
            few.get(&format!("{i}.txt"), &rules, now).unwrap();
            assert!(few.len() <= 3);
        }
        let mut tiny = Cache::new(100, 3, REVALIDATE_EVERY);
        assert!(tiny.get("0.txt", &rules, now).is_ok(), "too big to keep, still served");
        assert_eq!(tiny.len(), 0);
        std::fs::remove_dir_all(root).unwrap();
    }
}
