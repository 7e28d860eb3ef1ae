//! The problem scope around a handler: its rejections (its extractors', and a
//! [`Rejection`](crate::Rejection) it returns) render as problem details when its
//! request's path is one the app asked for (`problem.rs`). Apart from `problem.rs`,
//! which the rendering of every rejection reads, because this wraps handlers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use kiln_http::Response;

use crate::extract::RequestContext;
use crate::handler::{Dispatch, ErasedHandler};
use crate::problem::{Problems, scoped};

/// Wraps a handler in a [`Scoped`], at build time: an app without problem prefixes
/// keeps its handlers as they are.
pub(crate) fn scope<S: 'static>(
    problems: &Arc<Problems>,
    inner: Arc<dyn ErasedHandler<S>>,
) -> Arc<dyn ErasedHandler<S>> {
    Arc::new(Scoped { inner, problems: problems.clone() })
}

/// A handler of an app with problem prefixes: runs its inner handler inside a problem
/// scope when the request's path is covered.
struct Scoped<S> {
    inner: Arc<dyn ErasedHandler<S>>,
    problems: Arc<Problems>,
}

impl<S> ErasedHandler<S> for Scoped<S> {
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        let path = cx.request().path();
        if !self.problems.covers(path) {
            return self.inner.start(cx, res);
        }
        match scoped(path, || self.inner.start(cx, res)) {
            Dispatch::Done => Dispatch::Done,
            Dispatch::Running(answer) => Dispatch::Running(Box::pin(InScope { path, answer })),
        }
    }
}

/// A handler's answer, polled inside its problem scope.
struct InScope<'a> {
    path: &'a str,
    answer: Pin<Box<dyn Future<Output = ()> + 'a>>,
}

impl Future for InScope<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        scoped(this.path, || this.answer.as_mut().poll(cx))
    }
}
