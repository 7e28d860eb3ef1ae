//! What describes a handler: [`Describe`] for its arguments, [`DescribeResponse`] for
//! its output, [`DescribedHandler`] for the whole, and [`App::api`] which records it.

use std::future::Future;

use crate::app::App;
use crate::handler::{HandlerFn, RouteHandler};
use crate::route::Route;

use super::operation::{Operation, ParamIn};

/// A handler argument's part of an operation: its parameters, body, security and the
/// statuses of its rejections.
///
/// kiln implements it for its extractors; a `Json<T>`, `Query<T>` or `Form<T>` needs
/// `T: JsonSchema`. An extractor of the app's own implements it too, in a line when
/// it adds nothing to the document: `impl kiln::openapi::Describe for Caller {}`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be described in the API document: it does not implement `kiln::openapi::Describe`",
    label = "this argument is not described",
    note = "`Json<T>`, `Query<T>` and `Form<T>` are described when `T` implements `JsonSchema` (`#[derive(JsonSchema)]` beside `Deserialize`)",
    note = "an extractor of your own implements `kiln::openapi::Describe` (`impl Describe for {Self} {{}}` when it adds nothing), or register the handler with `App::route`, which describes only its route"
)]
pub trait Describe {
    /// Adds what the argument reads and how it refuses to `op`; by default nothing.
    fn describe(op: &mut Operation<'_>) {
        let _ = op;
    }
}

/// A handler output's part of an operation: its statuses and bodies.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be described in the API document: it does not implement `kiln::openapi::DescribeResponse`",
    label = "the handler returns this type",
    note = "`Json<T>` is described when `T` implements `JsonSchema`; an `impl IntoResponse` cannot be described: name the type, or register the handler with `App::route`, which describes only its route",
    note = "a response type of your own implements `kiln::openapi::DescribeResponse`"
)]
pub trait DescribeResponse {
    /// Adds the responses the output can make to `op`.
    fn describe_response(op: &mut Operation<'_>);
}

/// A handler the API document describes from its types: a route handler whose
/// arguments are [`Describe`] and whose output is [`DescribeResponse`]. What
/// [`App::api`] takes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be described in the API document",
    label = "not a described handler",
    note = "`App::api` takes a route handler whose arguments implement `kiln::openapi::Describe` and whose output implements `kiln::openapi::DescribeResponse`; `App::route` takes any handler"
)]
pub trait DescribedHandler<Args, S>: RouteHandler<Args, S> {
    /// Describes the handler's operation: route, arguments, output.
    #[doc(hidden)]
    fn describe(op: &mut Operation<'_>);
}

impl<F, Args, S> DescribedHandler<Args, S> for F
where
    F: RouteHandler<Args, S> + HandlerFn<Args>,
    Args: DescribeArgs,
    <F::Future as Future>::Output: DescribeResponse,
{
    fn describe(op: &mut Operation<'_>) {
        Args::describe(op);
        <<F::Future as Future>::Output as DescribeResponse>::describe_response(op);
    }
}

/// A route handler's arguments: the route, then extractors that are [`Describe`].
#[doc(hidden)]
pub trait DescribeArgs {
    fn describe(op: &mut Operation<'_>);
}

macro_rules! describe_args {
    ($($arg:ident),*) => {
        impl<R: Route, $($arg: Describe,)*> DescribeArgs for (R, $($arg,)*) {
            fn describe(op: &mut Operation<'_>) {
                describe_route::<R>(op);
                $($arg::describe(op);)*
            }
        }
    };
}

describe_args!();
describe_args!(T2);
describe_args!(T2, T3);
describe_args!(T2, T3, T4);
describe_args!(T2, T3, T4, T5);
describe_args!(T2, T3, T4, T5, T6);
describe_args!(T2, T3, T4, T5, T6, T7);
describe_args!(T2, T3, T4, T5, T6, T7, T8);

/// How a registered route is described, kept in its route entry and called only when
/// the document is built.
#[derive(Clone, Copy)]
pub(crate) struct Describer {
    pub(crate) describe: fn(&mut Operation<'_>),
    /// Registered with [`App::api`]: described from the handler's types, not only
    /// from its route.
    pub(crate) handler: bool,
}

impl Describer {
    /// A route registered with [`App::route`]: what the route type tells.
    pub(crate) fn route<R: Route>() -> Self {
        Describer { describe: describe_route::<R>, handler: false }
    }

    fn handler<H: DescribedHandler<A, S>, A, S>() -> Self {
        Describer { describe: H::describe, handler: true }
    }
}

/// The route's name, doc comment and parameters, and the rejections parsing them makes.
fn describe_route<R: Route>(op: &mut Operation<'_>) {
    op.parts.route = Some((std::any::type_name::<R>(), R::DOC));
    let params = R::parameters();
    if params.iter().any(|p| p.in_path) {
        op.response("404", "a path parameter does not parse: the path names no resource");
    }
    if params.iter().any(|p| !p.in_path) {
        op.response("400", "a query parameter is missing, repeated or does not parse");
    }
    for param in params {
        let mut schema = super::params::schema(&param.ty, op.schemas);
        if !param.doc.is_empty() && schema.is_object() {
            schema["description"] = param.doc.into();
        }
        let location = if param.in_path { ParamIn::Path } else { ParamIn::Query };
        op.parameter(location, param.name, param.required, schema);
    }
}

impl<S: 'static> App<S> {
    /// Answers a typed route with `handler`, as [`route`](Self::route) does, and
    /// describes it in the app's API document ([`openapi`](Self::openapi)) from its
    /// types: the route, each argument ([`Describe`]) and the output
    /// ([`DescribeResponse`]). A handler whose types cannot be described does not
    /// compile here; [`route`](Self::route) takes it, describing its route only.
    ///
    /// ```
    /// use kiln::{App, Json, Route};
    /// use kiln::openapi::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    ///
    /// /// Adds two numbers.
    /// #[derive(Route)]
    /// #[route(POST, "/sum")]
    /// struct Sum;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// #[schemars(crate = "kiln::openapi::schemars")]
    /// struct Terms { a: i64, b: i64 }
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// #[schemars(crate = "kiln::openapi::schemars")]
    /// struct Total { sum: i64 }
    ///
    /// async fn sum(_: Sum, Json(t): Json<Terms>) -> Json<Total> {
    ///     Json(Total { sum: t.a + t.b })
    /// }
    ///
    /// let doc = App::new(|_| ()).api(sum).openapi();
    /// let op = &doc.json()["paths"]["/sum"]["post"];
    /// assert_eq!(op["summary"], "Adds two numbers.");
    /// assert_eq!(op["requestBody"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Terms");
    /// assert_eq!(op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Total");
    /// assert_eq!(op["responses"]["422"]["description"], "the JSON body has the wrong shape");
    /// ```
    pub fn api<H: DescribedHandler<A, S>, A: 'static>(self, handler: H) -> Self {
        self.route(handler).describe_last(Describer::handler::<H, A, S>())
    }
}
