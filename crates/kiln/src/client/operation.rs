//! What a handler's types tell the client: the route it answers (its first argument),
//! the body it reads (the argument that is a body extractor) and the body it answers
//! with (its output). Nothing here is written per operation: the traits are
//! implemented for kiln's extractors and responses, and picked by the compiler.

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::form::Form;
use crate::handler::{HandlerFn, RouteArguments};
use crate::json::Json;

/// A request body as an extractor reads it: `Json<T>` and `Form<T>` read a `T`.
pub trait BodyExtractor {
    /// What the caller gives.
    type Body;

    /// The body's `Content-Type` and bytes.
    fn encode(body: &Self::Body) -> Result<(&'static str, Vec<u8>), String>;
}

impl<T: Serialize> BodyExtractor for Json<T> {
    type Body = T;

    fn encode(body: &T) -> Result<(&'static str, Vec<u8>), String> {
        Ok(("application/json", serde_json::to_vec(body).map_err(|e| e.to_string())?))
    }
}

impl<T: Serialize> BodyExtractor for Form<T> {
    type Body = T;

    fn encode(body: &T) -> Result<(&'static str, Vec<u8>), String> {
        let form = serde_urlencoded::to_string(body).map_err(|e| e.to_string())?;
        Ok(("application/x-www-form-urlencoded", form.into_bytes()))
    }
}

#[cfg(feature = "validate")]
impl<E: BodyExtractor> BodyExtractor for crate::valid::Valid<E> {
    type Body = E::Body;

    fn encode(body: &Self::Body) -> Result<(&'static str, Vec<u8>), String> {
        E::encode(body)
    }
}

/// A handler output the client can read: `Json<T>` answers a `T`, `Result<O, E>`
/// answers what `O` does (an `E` is an error status, [`Error::status`](super::Error::status)).
pub trait Answer {
    /// What the caller gets.
    type Data;

    /// Reads the body of a success.
    fn decode(body: &[u8]) -> Result<Self::Data, String>;
}

impl<T: DeserializeOwned> Answer for Json<T> {
    type Data = T;

    fn decode(body: &[u8]) -> Result<T, String> {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    }
}

impl<O: Answer, E> Answer for Result<O, E> {
    type Data = O::Data;

    fn decode(body: &[u8]) -> Result<O::Data, String> {
        O::decode(body)
    }
}

impl Answer for String {
    type Data = String;

    fn decode(body: &[u8]) -> Result<String, String> {
        String::from_utf8(body.to_vec()).map_err(|e| e.to_string())
    }
}

impl Answer for () {
    type Data = ();

    fn decode(_: &[u8]) -> Result<(), String> {
        Ok(())
    }
}

/// Where in a handler's arguments its body extractor is, found by the compiler: a
/// position type, one per argument, so that the impls of [`Sends`] never overlap.
#[doc(hidden)]
pub mod at {
    /// No argument reads a body.
    pub struct Nothing;
    macro_rules! positions {
        ($($name:ident),*) => { $(#[allow(missing_docs)] pub struct $name;)* };
    }
    positions!(P2, P3, P4, P5, P6, P7, P8);
}

/// A handler's arguments that send `B`: `()` when none reads a body, else the `Body`
/// of the one body extractor, at position `I` (inferred).
#[diagnostic::on_unimplemented(
    message = "this handler does not read a body of type `{B}`",
    label = "the body given to `Client::call`",
    note = "give `()` to a handler without a body extractor, and a `T` to one that takes `Json<T>` or `Form<T>`"
)]
pub trait Sends<B, I> {
    /// The body's `Content-Type` and bytes, if there is one.
    fn encode(body: &B) -> Result<Option<(&'static str, Vec<u8>)>, String>;
}

impl<A> Sends<(), at::Nothing> for A {
    fn encode(_: &()) -> Result<Option<(&'static str, Vec<u8>)>, String> {
        Ok(None)
    }
}

macro_rules! sends_at {
    ($pos:ident, $body:ident; $($arg:ident),*) => {
        impl<R, $($arg,)*> Sends<<$body as BodyExtractor>::Body, at::$pos> for (R, $($arg,)*)
        where
            $body: BodyExtractor,
        {
            fn encode(body: &<$body as BodyExtractor>::Body) -> Result<Option<(&'static str, Vec<u8>)>, String> {
                $body::encode(body).map(Some)
            }
        }
    };
}

sends_at!(P2, T2; T2);
sends_at!(P2, T2; T2, T3);
sends_at!(P3, T3; T2, T3);
sends_at!(P2, T2; T2, T3, T4);
sends_at!(P3, T3; T2, T3, T4);
sends_at!(P4, T4; T2, T3, T4);
sends_at!(P2, T2; T2, T3, T4, T5);
sends_at!(P3, T3; T2, T3, T4, T5);
sends_at!(P4, T4; T2, T3, T4, T5);
sends_at!(P5, T5; T2, T3, T4, T5);
sends_at!(P2, T2; T2, T3, T4, T5, T6);
sends_at!(P3, T3; T2, T3, T4, T5, T6);
sends_at!(P4, T4; T2, T3, T4, T5, T6);
sends_at!(P5, T5; T2, T3, T4, T5, T6);
sends_at!(P6, T6; T2, T3, T4, T5, T6);
sends_at!(P2, T2; T2, T3, T4, T5, T6, T7);
sends_at!(P3, T3; T2, T3, T4, T5, T6, T7);
sends_at!(P4, T4; T2, T3, T4, T5, T6, T7);
sends_at!(P5, T5; T2, T3, T4, T5, T6, T7);
sends_at!(P6, T6; T2, T3, T4, T5, T6, T7);
sends_at!(P7, T7; T2, T3, T4, T5, T6, T7);
sends_at!(P2, T2; T2, T3, T4, T5, T6, T7, T8);
sends_at!(P3, T3; T2, T3, T4, T5, T6, T7, T8);
sends_at!(P4, T4; T2, T3, T4, T5, T6, T7, T8);
sends_at!(P5, T5; T2, T3, T4, T5, T6, T7, T8);
sends_at!(P6, T6; T2, T3, T4, T5, T6, T7, T8);
sends_at!(P7, T7; T2, T3, T4, T5, T6, T7, T8);
sends_at!(P8, T8; T2, T3, T4, T5, T6, T7, T8);

/// A handler the client can call with arguments `A` (inferred): its route is `A`'s
/// first, and its output is an [`Answer`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be called by `kiln::client::Client`",
    label = "not a handler the client can call",
    note = "the client calls a route handler (its first argument a `#[derive(Route)]` type) whose output is `Json<T>`, `String`, `()` or a `Result` of one"
)]
pub trait Callable<A>: HandlerFn<A> {
    /// The route the handler answers.
    type Route: crate::Route;
    /// What a success's body reads as.
    type Data;

    /// Reads a success's body.
    #[doc(hidden)]
    fn decode(body: &[u8]) -> Result<Self::Data, String>;
}

impl<H, A> Callable<A> for H
where
    H: HandlerFn<A>,
    A: RouteArguments,
    <H::Future as Future>::Output: Answer,
{
    type Route = A::Route;
    type Data = <<H::Future as Future>::Output as Answer>::Data;

    fn decode(body: &[u8]) -> Result<Self::Data, String> {
        <<H::Future as Future>::Output as Answer>::decode(body)
    }
}
