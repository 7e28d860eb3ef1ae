//! A multipart form whose fields a type names: [`MultipartFields<T>`], so that the
//! API document can list them.

use serde::de::{Deserialize, DeserializeOwned, Deserializer, Error as _};

use super::Multipart;
use super::form::MultipartForm;
use crate::extract::{FromRequest, RequestContext};
use crate::fields::from_pairs;
use crate::rejection::{Internal, InvalidForm, Rejection};

/// Marks the value a file field stands for among the pairs `T` is read from, so that
/// a [`FileField`] is never filled by a text field.
const FILE: &str = "\0file\0";

/// A `multipart/form-data` body read whole, its text fields deserialised into
/// `fields` (with serde, parsed as a query's are) and its files kept in `form`. A
/// field of `T` typed [`FileField`] requires a file under its name; the handler takes
/// it from `form`. Refused as [`Multipart`] refuses, and with `422` when the fields do
/// not fit `T`.
///
/// With feature `openapi`, the body's schema in the document is `T`'s, each
/// `FileField` a binary string: the form's fields are described, unlike a bare
/// `Multipart`'s, which the handler reads by name at run time.
///
/// ```
/// use kiln::multipart::{FileField, MultipartFields};
/// use kiln::{App, Route};
/// use serde::Deserialize;
///
/// #[derive(Route)]
/// #[route(POST, "/avatars")]
/// struct PostAvatar;
///
/// #[derive(Deserialize)]
/// struct Avatar { user: String, image: FileField }
///
/// async fn post_avatar(_: PostAvatar, mut upload: MultipartFields<Avatar>) -> Result<String, kiln::Rejection> {
///     let image = upload.form.take_file("image")?;
///     Ok(format!("{}: {} bytes ({:?})", upload.fields.user, image.len(), upload.fields.image.file_name()))
/// }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(post_avatar));
/// let res = client
///     .request("POST", &PostAvatar)
///     .multipart(&[("user", None, b"ann".as_slice()), ("image", Some("ann.png"), &[1u8; 10])])
///     .send();
/// assert_eq!(res.text(), "ann: 10 bytes (Some(\"ann.png\"))");
/// let res = client.request("POST", &PostAvatar).multipart(&[("user", None, b"ann".as_slice())]).send();
/// assert_eq!(res.status(), 422);
/// ```
#[derive(Debug)]
pub struct MultipartFields<T> {
    /// The text fields, and which files were sent.
    pub fields: T,
    /// The whole form: its files, to take or persist.
    pub form: MultipartForm,
}

/// A file field of a [`MultipartFields`] type: its presence, and the file's name as
/// the client gave it. The file itself is in [`MultipartFields::form`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileField {
    file_name: Option<String>,
}

impl FileField {
    /// The file's name as the client gave it (`filename` of its part).
    pub fn file_name(&self) -> Option<&str> {
        self.file_name.as_deref()
    }
}

impl<'de> Deserialize<'de> for FileField {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        let Some(file_name) = value.strip_prefix(FILE) else {
            return Err(D::Error::custom("expected a file, found a text field"));
        };
        Ok(FileField { file_name: (!file_name.is_empty()).then(|| file_name.to_owned()) })
    }
}

/// Reads the whole form inside the handler's future (`AWAITS`), as `Multipart::collect`.
impl<S, T: DeserializeOwned> FromRequest<S> for MultipartFields<T> {
    const AWAITS: bool = true;

    fn from_request(_: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Err(Internal::new("`MultipartFields` is read inside the handler's future").into())
    }

    async fn from_request_awaiting(cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
        let form = Multipart::from_request(&cx)?.collect().await.map_err(|e| e.rejection())?;
        let files: Vec<(&str, String)> =
            form.files().map(|f| (f.name(), format!("{FILE}{}", f.file_name().unwrap_or("")))).collect();
        let pairs = form.texts().chain(files.iter().map(|(name, value)| (*name, value.as_str())));
        let fields = from_pairs(pairs).map_err(|e| InvalidForm::new(format!("invalid form: {e}")))?;
        Ok(MultipartFields { fields, form })
    }
}
