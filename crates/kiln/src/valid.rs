//! Validated inputs (feature `validate`): `Valid<Json<T>>`, `Valid<Form<T>>` and
//! `Valid<Query<T>>` check `T`'s constraints, declared once on `T` with garde, when the
//! extractor runs; the API document shows the same constraints in `T`'s schema.

use garde::Validate;

use crate::extract::{FromRequest, RequestContext};
use crate::form::{Form, Query};
use crate::json::Json;
use crate::rejection::{FieldError, InvalidInput, Rejection};

/// An extractor whose value passed its checks: `Valid(Json(page)): Valid<Json<NewPage>>`
/// where `NewPage` derives `garde::Validate`.
///
/// Extraction refuses as the inner extractor does (a malformed body is still `400`);
/// a value that breaks its constraints is refused with `422`, the message listing
/// every failing field by its path (`author.name`, `tags[2]`) with garde's message.
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
}

macro_rules! payload {
    ($($extractor:ident),*) => {
        $(impl<T: Validate> Payload for $extractor<T> {
            type Value = T;

            fn payload(&self) -> &T {
                &self.0
            }
        })*
    };
}

payload!(Json, Form, Query);

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
            Err(report) => Err(refusal(&report)),
        }
    }
}

/// The `422`, listing every failing field by path (garde's order).
fn refusal(report: &garde::Report) -> Rejection {
    let fields = report.iter().map(|(path, error)| FieldError::new(path.to_string(), error.message())).collect();
    InvalidInput::new(fields).into()
}
