//! A temporary file for an upload: created with a random name that no other file
//! has, removed when dropped unless persisted.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// An uploaded file on disk, removed when dropped unless [persisted](Self::persist).
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
    file: Option<File>,
    kept: bool,
}

impl TempFile {
    /// Creates a new empty file in `dir`, readable by this user only.
    pub(super) fn create(dir: &Path) -> io::Result<Self> {
        let path = dir.join(format!("kiln-upload-{}", &crate::key::random_token()[..32]));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path)?;
        Ok(TempFile { path, file: Some(file), kept: false })
    }

    pub(super) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.write_all(bytes),
            None => Err(io::Error::other("the upload is already complete")),
        }
    }

    /// Closes the file once the upload is complete.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        match self.file.take() {
            Some(f) => f.sync_data().or(Ok(())),
            None => Ok(()),
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the file to `to` and keeps it there (a rename, or a copy across file
    /// systems).
    pub fn persist(mut self, to: impl AsRef<Path>) -> io::Result<()> {
        let to = to.as_ref();
        if std::fs::rename(&self.path, to).is_err() {
            std::fs::copy(&self.path, to)?;
            let _ = std::fs::remove_file(&self.path);
        }
        self.kept = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
