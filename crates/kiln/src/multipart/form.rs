//! A whole form, read by [`Multipart::collect`](super::Multipart::collect): its text
//! fields and its saved files, looked up by name (`422` for a missing one).

use bytes::Bytes;

use super::MultipartError;
use super::temp::TempFile;

/// A saved file field.
#[derive(Debug)]
pub struct Upload {
    pub(super) name: String,
    pub(super) file_name: Option<String>,
    pub(super) content_type: Option<String>,
    pub(super) len: u64,
    pub(super) data: UploadData,
}

/// Where a saved file's bytes are.
#[derive(Debug)]
pub enum UploadData {
    /// In memory: the file was under the form's memory threshold.
    Memory(Bytes),
    /// In a temporary file, removed when dropped unless persisted.
    File(TempFile),
}

impl Upload {
    /// The field's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file name the client sent, as sent: never use it as a path unchecked.
    pub fn file_name(&self) -> Option<&str> {
        self.file_name.as_deref()
    }

    /// The `Content-Type` the client sent.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_deref()
    }

    /// The file's size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty (a file input left empty sends one with no name).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the bytes are.
    pub fn data(&self) -> &UploadData {
        &self.data
    }

    /// Stores the file at `to`: written from memory, or the temporary file moved.
    pub fn persist(self, to: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        match self.data {
            UploadData::Memory(bytes) => std::fs::write(to, &bytes),
            UploadData::File(file) => file.persist(to),
        }
    }

    /// The file's bytes, read into memory if it was saved to disk.
    pub fn to_bytes(&self) -> std::io::Result<Bytes> {
        match &self.data {
            UploadData::Memory(bytes) => Ok(bytes.clone()),
            UploadData::File(file) => std::fs::read(file.path()).map(Bytes::from),
        }
    }
}

/// Every field of a form, in the order sent.
///
/// Text fields are read as owned `String`s and files taken out by value, so a
/// handler reads the form in the order it has its fields, holding no borrow of the
/// form between them:
///
/// ```
/// use kiln::multipart::{Multipart, Upload};
///
/// async fn read(form: Multipart) -> Result<(String, Upload), kiln::rejection::Rejection> {
///     let mut form = form.collect().await?;
///     let title = form.text("title")?;
///     let image = form.take_file("image")?;
///     Ok((title, image))
/// }
/// ```
#[derive(Debug, Default)]
pub struct MultipartForm {
    pub(super) texts: Vec<(String, String)>,
    pub(super) files: Vec<Upload>,
}

impl MultipartForm {
    /// The first text field named `name`, as an owned copy (a text field is small:
    /// [`max_field_bytes`](super::MultipartLimits::max_field_bytes)); absent,
    /// [`MultipartError::MissingField`] (`422`).
    pub fn text(&self, name: &str) -> Result<String, MultipartError> {
        self.texts
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| MultipartError::MissingField(name.to_owned()))
    }

    /// The first file field named `name`; absent, [`MultipartError::MissingField`]
    /// (`422`).
    pub fn file(&self, name: &str) -> Result<&Upload, MultipartError> {
        self.files.iter().find(|u| u.name == name).ok_or_else(|| MultipartError::MissingField(name.to_owned()))
    }

    /// Takes the first file field named `name` out of the form, to persist it.
    pub fn take_file(&mut self, name: &str) -> Result<Upload, MultipartError> {
        let at = self.files.iter().position(|u| u.name == name);
        at.map(|i| self.files.remove(i)).ok_or_else(|| MultipartError::MissingField(name.to_owned()))
    }

    /// Every text field, in order.
    pub fn texts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.texts.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Every file, in order.
    pub fn files(&self) -> impl Iterator<Item = &Upload> {
        self.files.iter()
    }
}
