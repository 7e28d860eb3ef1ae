//! Security for APIs: bearer tokens signed with the app's [`Key`](crate::Key), and
//! the key itself as an extractor for the handlers that issue them. (Cookies,
//! sessions and CSRF, older, sit beside `lib.rs`.)

mod app_key;
mod bearer;

pub use bearer::{BEARER_CONTEXT, BearerToken};
