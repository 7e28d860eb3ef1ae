//! One field of a multipart form: its name, file name and type, and its data read
//! in pieces as the body arrives.

use bytes::{Bytes, BytesMut};

use super::form::{Upload, UploadData};
use super::temp::TempFile;
use super::{Multipart, MultipartError};
use crate::form_data::{Event, PartHead};

/// One field of a [`Multipart`] form, borrowed from it until read or dropped (what is
/// left unread is skipped by the next [`Multipart::next_field`]).
#[derive(Debug)]
pub struct Field<'m> {
    form: &'m mut Multipart,
    head: PartHead,
    read: u64,
    done: bool,
}

impl<'m> Field<'m> {
    pub(super) fn new(form: &'m mut Multipart, head: PartHead) -> Self {
        Field { form, head, read: 0, done: false }
    }

    /// The field's name (`name="…"`).
    pub fn name(&self) -> &str {
        &self.head.name
    }

    /// The file name a file field was sent with (`filename="…"`), as the client sent
    /// it: never use it as a path unchecked.
    pub fn file_name(&self) -> Option<&str> {
        self.head.file_name.as_deref()
    }

    /// The field's `Content-Type`, if the client sent one.
    pub fn content_type(&self) -> Option<&str> {
        self.head.content_type.as_deref()
    }

    /// The limit of this field: a file's, or a text field's.
    fn limit(&self) -> u64 {
        let limits = &self.form.limits;
        if self.head.file_name.is_some() { limits.max_file_bytes } else { limits.max_field_bytes }
    }

    /// The next piece of the field's data; `None` at its end. Over the field's limit,
    /// [`MultipartError::FieldTooLarge`] (`413`).
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, MultipartError> {
        if self.done {
            return Ok(None);
        }
        match self.form.event().await? {
            Event::Data(data) => {
                self.read += data.len() as u64;
                if self.read > self.limit() {
                    return Err(MultipartError::FieldTooLarge { field: self.head.name.clone(), limit: self.limit() });
                }
                Ok(Some(data))
            }
            Event::PartEnd => {
                self.form.in_part = false;
                self.done = true;
                Ok(None)
            }
            _ => Err(MultipartError::Malformed("a part ended without its delimiter")),
        }
    }

    /// The whole field in memory (bounded by its limit).
    pub async fn bytes(mut self) -> Result<Bytes, MultipartError> {
        let mut all = BytesMut::new();
        while let Some(piece) = self.chunk().await? {
            all.extend_from_slice(&piece);
        }
        Ok(all.freeze())
    }

    /// The whole field as text; not UTF-8 is [`MultipartError::NotUtf8`] (`400`).
    pub async fn text(self) -> Result<String, MultipartError> {
        let name = self.head.name.clone();
        let bytes = self.bytes().await?;
        String::from_utf8(bytes.to_vec()).map_err(|_| MultipartError::NotUtf8(name))
    }

    /// Saves the field: in memory up to the form's
    /// [`memory_threshold`](super::MultipartLimits::memory_threshold), else in a
    /// temporary file written as the data arrives, which is removed when the
    /// [`Upload`] drops unless it is [persisted](TempFile::persist). The writes go to
    /// the page cache with plain `write(2)` calls, one per piece of the body.
    pub async fn save(mut self) -> Result<Upload, MultipartError> {
        let threshold = self.form.limits.memory_threshold;
        let dir = self.form.limits.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
        let mut memory = BytesMut::new();
        let mut file: Option<TempFile> = None;
        let io = |e: std::io::Error| MultipartError::Io(e.to_string());
        while let Some(piece) = self.chunk().await? {
            match &mut file {
                Some(f) => f.write(&piece).map_err(io)?,
                None if memory.len() + piece.len() > threshold => {
                    let mut f = TempFile::create(&dir).map_err(io)?;
                    f.write(&memory).map_err(io)?;
                    f.write(&piece).map_err(io)?;
                    memory = BytesMut::new();
                    file = Some(f);
                }
                None => memory.extend_from_slice(&piece),
            }
        }
        let data = match file {
            Some(mut f) => {
                f.finish().map_err(io)?;
                UploadData::File(f)
            }
            None => UploadData::Memory(memory.freeze()),
        };
        Ok(Upload {
            name: self.head.name.clone(),
            file_name: self.head.file_name.clone(),
            content_type: self.head.content_type.clone(),
            len: self.read,
            data,
        })
    }
}
