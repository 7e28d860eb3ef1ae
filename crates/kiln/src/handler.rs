//! Handlers: `async fn`s whose arguments are extractors and whose output converts
//! into a response.

use std::future::Future;
use std::pin::Pin;

use kiln_http::Response;

use crate::extract::{FromRequest, RequestContext};
use crate::response::IntoResponse;
use crate::route::Route;

/// What starting a handler left to do.
#[doc(hidden)]
pub enum Dispatch<'a> {
    /// The response is complete (an extractor refused the request).
    Done,
    /// The handler is running; the response is complete when this future is.
    Running(Pin<Box<dyn Future<Output = ()> + 'a>>),
}

/// An `async fn` (or closure returning a future) that can answer requests: up to
/// eight arguments, each [`FromRequest`], and an output that is [`IntoResponse`].
///
/// Handlers are shared by every worker, so the function itself must be
/// `Send + Sync` (plain `fn` items are); the future it returns need not be `Send`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kiln handler",
    label = "not a handler for an app whose state is `{S}`",
    note = "a handler is an `async fn` taking at most 8 arguments that each implement `FromRequest<{S}>`, returning a type that implements `IntoResponse`"
)]
pub trait Handler<Args, S>: Send + Sync + 'static {
    /// Extracts the arguments and starts the handler.
    #[doc(hidden)]
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a>;
}

macro_rules! handler {
    ($($arg:ident),*) => {
        #[allow(non_snake_case, unused_variables)]
        impl<F, Fut, Out, S, $($arg,)*> Handler<($($arg,)*), S> for F
        where
            F: Fn($($arg),*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Out> + 'static,
            Out: IntoResponse,
            S: 'static,
            $($arg: FromRequest<S>,)*
        {
            fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
                $(
                    let $arg = match $arg::from_request(cx) {
                        Ok(value) => value,
                        Err(rejection) => {
                            cx.shared.reject(&rejection, res);
                            return Dispatch::Done;
                        }
                    };
                )*
                let fut = self($($arg),*);
                Dispatch::Running(Box::pin(async move { fut.await.into_response(res) }))
            }
        }
    };
}

/// A handler whose first argument is the typed route it answers, so that
/// [`App::route`](crate::App::route) knows the pattern and method from the handler.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a handler for a typed route",
    label = "not a route handler for an app whose state is `{S}`",
    note = "the first argument must be the typed route it answers (`#[derive(Route)]`; `_: Pong` if its fields are not needed)",
    note = "every other argument must implement `FromRequest<{S}>` (`Query<T>`, `Form<T>`, `Json<T>`, `Headers`, `Cookies`, `State<{S}>`, `RequestHead`, `Method`, `Bytes`, `String`), at most 8 in all",
    note = "the output must implement `IntoResponse`"
)]
pub trait RouteHandler<Args, S>: Handler<Args, S> {
    /// The route the handler answers.
    type Route: Route;
}

macro_rules! route_handler {
    ($($arg:ident),*) => {
        impl<F, Fut, Out, S, R, $($arg,)*> RouteHandler<(R, $($arg,)*), S> for F
        where
            F: Fn(R, $($arg),*) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Out> + 'static,
            Out: IntoResponse,
            S: 'static,
            R: Route,
            $($arg: FromRequest<S>,)*
        {
            type Route = R;
        }
    };
}

handler!();
handler!(T1);
handler!(T1, T2);
handler!(T1, T2, T3);
handler!(T1, T2, T3, T4);
handler!(T1, T2, T3, T4, T5);
handler!(T1, T2, T3, T4, T5, T6);
handler!(T1, T2, T3, T4, T5, T6, T7);
handler!(T1, T2, T3, T4, T5, T6, T7, T8);
route_handler!();
route_handler!(T2);
route_handler!(T2, T3);
route_handler!(T2, T3, T4);
route_handler!(T2, T3, T4, T5);
route_handler!(T2, T3, T4, T5, T6);
route_handler!(T2, T3, T4, T5, T6, T7);
route_handler!(T2, T3, T4, T5, T6, T7, T8);

/// A handler with its argument types forgotten, as the router stores it.
pub(crate) trait ErasedHandler<S>: Send + Sync {
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a>;
}

/// Remembers `Args` so that a `Handler<Args, S>` can be stored as `dyn ErasedHandler<S>`.
pub(crate) struct Erased<H, Args> {
    handler: H,
    _args: std::marker::PhantomData<fn() -> Args>,
}

impl<H, Args> Erased<H, Args> {
    pub(crate) fn new(handler: H) -> Self {
        Erased { handler, _args: std::marker::PhantomData }
    }
}

impl<H: Handler<Args, S>, Args, S> ErasedHandler<S> for Erased<H, Args> {
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        self.handler.start(cx, res)
    }
}
