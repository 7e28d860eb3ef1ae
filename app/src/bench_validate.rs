//! What validation costs per request (issue 32: "validation costs no more than calling
//! the validation crate directly"): one input, checked by `kiln::Valid` on
//! `/bench/valid` and by the handler calling garde itself on `/bench/validate-by-hand`.
//! Both answer the same `200`, and the same `422` (`kiln::rejection::InvalidInput`).
//! `bench/results/2026-11-28-contract-instructions/` counts their instructions.

use garde::Validate;
use kiln::rejection::{FieldError, InvalidInput, Rejection};
use kiln::{App, Query, Route, Valid};
use serde::Deserialize;

/// The input `kiln::Valid` checks.
#[derive(Route)]
#[route("/bench/valid")]
pub(crate) struct Checked;

/// The same input, checked by the handler.
#[derive(Route)]
#[route("/bench/validate-by-hand")]
pub(crate) struct ByHand;

/// A sign-up's fields, with a length, a range and a pattern-free format check.
#[derive(Deserialize, Validate)]
struct Signup {
    #[garde(length(chars, min = 2, max = 40))]
    name: String,
    #[garde(range(min = 13, max = 150))]
    age: u8,
    #[garde(ascii, length(max = 200))]
    email: String,
}

/// Adds the two routes to an app of any state.
pub(crate) fn mount<S: 'static>(app: App<S>) -> App<S> {
    app.route(checked).route(by_hand)
}

async fn checked(_: Checked, Valid(Query(signup)): Valid<Query<Signup>>) -> String {
    signup.name
}

async fn by_hand(_: ByHand, Query(signup): Query<Signup>) -> Result<String, Rejection> {
    match signup.validate() {
        Ok(()) => Ok(signup.name),
        Err(report) => {
            let fields = report.iter().map(|(path, error)| FieldError::new(path.to_string(), error.message()));
            Err(InvalidInput::new(fields.collect()).into())
        }
    }
}
