//! Validated inputs (feature `validate`): `Valid<Json<T>>`, `Valid<Form<T>>` and
//! `Valid<Query<T>>` check `T`'s constraints, declared once on `T` with garde, when the
//! extractor runs; the API document shows the same constraints in `T`'s schema.

use garde::Validate;

use crate::extract::{FromRequest, RequestContext};
use crate::form::{Form, Query};
use crate::json::Json;
use crate::rejection::{FieldError, InvalidInput, Rejection};
use crate::valid_names::{Source, as_sent, received};

/// An extractor whose value passed its checks: `Valid(Json(page)): Valid<Json<NewPage>>`
/// where `NewPage` derives `garde::Validate`.
///
/// Extraction refuses as the inner extractor does (a malformed body is still `400`);
/// a value that breaks its constraints is refused with `422`, the message listing
/// every failing field by its path (`author.name`, `tags[2]`) with garde's message.
/// The path names each field as the client sent it, which is the name the schema shows:
/// serde's `rename` and `rename_all` apply (`fullName`, not `full_name`). A field the
/// client did not send, renamed to an unrelated word, keeps its Rust name unless garde
/// is told the same name (`#[garde(rename = "...")]`).
///
/// ```
/// use kiln::{App, Json, Route, Valid};
/// use serde::Deserialize;
///
/// #[derive(Route)]
/// #[route(POST, "/signup")]
/// struct Signup;
///
/// #[derive(Deserialize, garde::Validate)]
/// struct Account {
///     #[garde(length(min = 3, max = 20))]
///     name: String,
///     #[garde(range(min = 13))]
///     age: u8,
/// }
///
/// async fn signup(_: Signup, Valid(Json(account)): Valid<Json<Account>>) -> String {
///     format!("welcome, {}", account.name)
/// }
///
/// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(signup));
/// let res = client.request("POST", &Signup).json(&serde_json::json!({ "name": "al", "age": 9 })).send();
/// assert_eq!(res.status(), 422);
/// assert_eq!(res.text(), "invalid input:\nage: lower than 13\nname: length is lower than 3\n");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Valid<E>(pub E);

/// An extractor holding a value to validate: `Json<T>`, `Form<T>`, `Query<T>`.
pub trait Payload {
    /// The value's type.
    type Value: Validate;

    /// The value.
    fn payload(&self) -> &Self::Value;

    /// Where the client sent the value, so that a refusal names its fields as sent;
    /// `None` keeps garde's names.
    #[doc(hidden)]
    const SOURCE: Option<Source> = None;
}

macro_rules! payload {
    ($($extractor:ident: $source:ident),*) => {
        $(impl<T: Validate> Payload for $extractor<T> {
            type Value = T;
            const SOURCE: Option<Source> = Some(Source::$source);

            fn payload(&self) -> &T {
                &self.0
            }
        })*
    };
}

payload!(Json: Json, Form: Form, Query: Query);

impl<S, E> FromRequest<S> for Valid<E>
where
    E: FromRequest<S> + Payload,
    <E::Value as Validate>::Context: Default,
{
    const NEEDS_SECRET_KEY: Option<&'static str> = E::NEEDS_SECRET_KEY;

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        let extracted = E::from_request(cx)?;
        match extracted.payload().validate() {
            Ok(()) => Ok(Valid(extracted)),
            Err(report) => Err(refusal(&report, E::SOURCE, cx)),
        }
    }
}

/// The `422`, listing every failing field by its path as sent (garde's order).
fn refusal<S>(report: &garde::Report, source: Option<Source>, cx: &RequestContext<'_, S>) -> Rejection {
    let input = source.map(|source| received(source, &cx.request()));
    let fields = report
        .iter()
        .map(|(path, error)| {
            let path = path.to_string();
            let path = match &input {
                Some(input) => as_sent(&path, input),
                None => path,
            };
            FieldError::new(path, error.message())
        })
        .collect();
    InvalidInput::new(fields).into()
}
