//! Handlers: `async fn`s whose arguments are extractors and whose output converts
//! into a response.
//!
//! Each trait has one impl for functions, split into what it needs (a function of
//! some arity, arguments that extract, an output that responds), so that a handler
//! that does not fit gets an error naming the argument or output at fault rather than
//! a generic "not a handler".

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::Poll;

use kiln_http::Response;

use crate::config::Config;
use crate::extract::{FromRequestAsync, RequestContext};
use crate::rejection::{Internal, Rejection};
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
/// eight arguments, each [`FromRequest`](crate::FromRequest) or [`FromRequestAsync`], and an output that is [`IntoResponse`].
///
/// Handlers are shared by every worker, so the function itself must be
/// `Send + Sync` (plain `fn` items are); the future it returns need not be `Send`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kiln handler",
    label = "not a handler for an app whose state is `{S}`",
    note = "a handler is an `async fn` taking at most 8 arguments that each implement `FromRequest<{S}>` (or `FromRequestAsync<{S}>`), returning a type that implements `IntoResponse`"
)]
pub trait Handler<Args, S>: Send + Sync + 'static {
    /// The first argument that needs the app's secret key, by name.
    #[doc(hidden)]
    const NEEDS_SECRET_KEY: Option<&'static str> = None;

    /// Whether an argument is a WebSocket handshake.
    #[doc(hidden)]
    const WEBSOCKET: bool = false;

    /// Extracts the arguments and starts the handler.
    #[doc(hidden)]
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a>;
}

impl<F, Args, S> Handler<Args, S> for F
where
    F: HandlerFn<Args>,
    Args: Arguments<S>,
    <F::Future as Future>::Output: IntoResponse,
    S: 'static,
{
    const NEEDS_SECRET_KEY: Option<&'static str> = Args::NEEDS_SECRET_KEY;
    const WEBSOCKET: bool = Args::WEBSOCKET;

    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        let config = cx.config();
        if Args::AWAITS {
            // The arguments are extracted inside the future the handler needs anyway,
            // so an async extractor costs no box of its own.
            let cx = cx.clone();
            return Dispatch::Running(Box::pin(async move {
                match caught(Args::extract_async(cx)).await {
                    Some(Ok(args)) => answer(self.call(args), config, res).await,
                    Some(Err(rejection)) => config.reject(&rejection, res),
                    None => config.reject(&Internal::new("internal server error").into(), res),
                }
            }));
        }
        match Args::extract(cx) {
            Ok(args) => Dispatch::Running(Box::pin(answer(self.call(args), config, res))),
            Err(rejection) => {
                config.reject(&rejection, res);
                Dispatch::Done
            }
        }
    }
}

/// Runs the handler's future and applies its output.
async fn answer<F: Future<Output: IntoResponse>>(fut: F, config: &Config, res: &mut Response) {
    match caught(fut).await {
        Some(output) => config.rendering(|| output.into_response(res)),
        // The engine would answer `500` too, but in plain text: this one is the app's
        // own error page. The panic hook has logged it, and the response is untouched:
        // the output had not been applied.
        None => config.reject(&Internal::new("internal server error").into(), res),
    }
}

/// `fut`'s output, or `None` if it panicked while polled.
async fn caught<F: Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(|cx| match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
        Ok(Poll::Ready(output)) => Poll::Ready(Some(output)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(_) => Poll::Ready(None),
    })
    .await
}

/// A function of `Args` returning a future: a handler's shape, before its argument and
/// output types are checked.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kiln handler",
    label = "not an `async fn` of at most 8 arguments",
    note = "a handler is an `async fn` (or a closure returning a future) taking at most 8 arguments; it must be `Send + Sync + 'static` (plain `fn` items are)"
)]
pub trait HandlerFn<Args>: Send + Sync + 'static {
    /// The future the function returns.
    type Future: Future + 'static;

    /// Calls the function.
    fn call(&self, args: Args) -> Self::Future;
}

/// A handler's arguments, extracted in order; the first refusal is answered.
#[doc(hidden)]
pub trait Arguments<S>: Sized {
    /// The first argument that needs the app's secret key, by name.
    const NEEDS_SECRET_KEY: Option<&'static str>;

    /// Whether any argument is a [`FromRequestAsync`] that waits.
    const AWAITS: bool;

    /// Whether any argument is a WebSocket handshake.
    const WEBSOCKET: bool;

    /// Builds every argument at once (none waits), or says why the request is refused.
    fn extract(cx: &RequestContext<'_, S>) -> Result<Self, Rejection>;

    /// Builds every argument, waiting for those that wait.
    fn extract_async(cx: RequestContext<'_, S>) -> impl Future<Output = Result<Self, Rejection>>;
}

/// A route handler's arguments: the typed route first.
#[doc(hidden)]
pub trait RouteArguments {
    /// The first argument: the route the handler answers.
    type Route: Route;
}

/// The first name given, in a constant.
const fn first_named(names: &[Option<&'static str>]) -> Option<&'static str> {
    let mut i = 0;
    while i < names.len() {
        if names[i].is_some() {
            return names[i];
        }
        i += 1;
    }
    None
}

macro_rules! handler {
    ($($arg:ident),*) => {
        #[allow(non_snake_case)]
        impl<F, Fut, $($arg,)*> HandlerFn<($($arg,)*)> for F
        where
            F: Fn($($arg),*) -> Fut + Send + Sync + 'static,
            Fut: Future + 'static,
        {
            type Future = Fut;

            fn call(&self, ($($arg,)*): ($($arg,)*)) -> Fut {
                self($($arg),*)
            }
        }

        #[allow(non_snake_case, unused_variables)]
        impl<S, $($arg: FromRequestAsync<S>,)*> Arguments<S> for ($($arg,)*) {
            const NEEDS_SECRET_KEY: Option<&'static str> = first_named(&[$($arg::NEEDS_SECRET_KEY),*]);
            const AWAITS: bool = false $(|| $arg::AWAITS)*;
            const WEBSOCKET: bool = false $(|| $arg::WEBSOCKET)*;

            fn extract(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
                Ok(($($arg::from_request_now(cx)?,)*))
            }

            async fn extract_async(cx: RequestContext<'_, S>) -> Result<Self, Rejection> {
                Ok(($($arg::from_request_async(cx.clone()).await?,)*))
            }
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

macro_rules! route_arguments {
    ($($arg:ident),*) => {
        impl<R: Route, $($arg,)*> RouteArguments for (R, $($arg,)*) {
            type Route = R;
        }
    };
}

route_arguments!();
route_arguments!(T2);
route_arguments!(T2, T3);
route_arguments!(T2, T3, T4);
route_arguments!(T2, T3, T4, T5);
route_arguments!(T2, T3, T4, T5, T6);
route_arguments!(T2, T3, T4, T5, T6, T7);
route_arguments!(T2, T3, T4, T5, T6, T7, T8);

/// A handler whose first argument is the typed route it answers, so that
/// [`App::route`](crate::App::route) knows the pattern and method from the handler.
pub trait RouteHandler<Args, S>: Handler<Args, S> {
    /// The route the handler answers.
    type Route: Route;
}

impl<F, Args, S> RouteHandler<Args, S> for F
where
    F: Handler<Args, S>,
    Args: RouteArguments,
{
    type Route = Args::Route;
}

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
