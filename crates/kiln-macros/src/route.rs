//! `#[derive(Route)]`: reads the struct and its `#[route]` attribute, checks the
//! pattern against the fields, and writes `impl Route` and `impl Display`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Token, Type};

use crate::pattern::{self, Piece};

/// Methods a route may name, as `kiln::Method` constants.
const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

/// The inside of `#[route(...)]`: an optional method, then the pattern.
struct RouteAttr {
    method: Ident,
    pattern: LitStr,
}

impl Parse for RouteAttr {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let method = if input.peek(Ident) {
            let method: Ident = input.parse()?;
            if !METHODS.contains(&method.to_string().as_str()) {
                let known = METHODS.join(", ");
                return Err(syn::Error::new(
                    method.span(),
                    format!("unknown method `{method}`; expected one of {known}"),
                ));
            }
            input.parse::<Token![,]>()?;
            method
        } else {
            Ident::new("GET", Span::call_site())
        };
        let pattern = input.parse()?;
        if !input.is_empty() {
            return Err(input.error("expected `#[route(\"/pattern\")]` or `#[route(METHOD, \"/pattern\")]`"));
        }
        Ok(RouteAttr { method, pattern })
    }
}

/// How a field gets its value.
enum Source<'a> {
    Capture,
    Wildcard,
    /// A query parameter: `Some(T)` when the field is `Option<T>`, `None` when required.
    Query(Option<&'a Type>),
}

struct Field<'a> {
    ident: &'a Ident,
    ty: &'a Type,
    source: Source<'a>,
    attrs: &'a [syn::Attribute],
}

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let attr = input.attrs.iter().find(|a| a.path().is_ident("route")).ok_or_else(|| {
        syn::Error::new(name.span(), "a route needs its pattern: add `#[route(\"/path/{capture}\")]`")
    })?;
    let RouteAttr { method, pattern } = attr.parse_args()?;
    let pieces = pattern::parse(&pattern.value()).map_err(|msg| syn::Error::new(pattern.span(), msg))?;

    let fields: Vec<&syn::Field> = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => named.named.iter().collect(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(f) => {
                return Err(syn::Error::new(f.span(), "a route's fields need names, to match its captures"));
            }
        },
        _ => return Err(syn::Error::new(name.span(), "`#[derive(Route)]` works on structs only")),
    };

    for piece in &pieces {
        if let Piece::Capture(c) | Piece::Wildcard(c) = piece {
            if !fields.iter().any(|f| f.ident.as_ref().is_some_and(|i| i == c)) {
                let msg = format!("the pattern captures `{c}` but `{name}` has no field named `{c}`");
                return Err(syn::Error::new(pattern.span(), msg));
            }
        }
    }

    let mut classified = Vec::with_capacity(fields.len());
    for f in &fields {
        let ident = f.ident.as_ref().expect("named field");
        let marked = f.attrs.iter().any(|a| a.path().is_ident("query"));
        let captured = pieces.iter().find_map(|p| match p {
            Piece::Capture(c) if ident == c => Some(Source::Capture),
            Piece::Wildcard(c) if ident == c => Some(Source::Wildcard),
            _ => None,
        });
        let source = match (captured, option_inner(&f.ty), marked) {
            (Some(_), _, true) => {
                return Err(syn::Error::new(
                    ident.span(),
                    format!("field `{ident}` is captured by the pattern, so it cannot also be `#[query]`"),
                ));
            }
            (Some(_), Some(_), false) => {
                return Err(syn::Error::new(
                    f.ty.span(),
                    format!("captured field `{ident}` cannot be an `Option`: a path segment is always present"),
                ));
            }
            (Some(s), None, false) => s,
            (None, Some(inner), _) => Source::Query(Some(inner)),
            (None, None, true) => Source::Query(None),
            (None, None, false) => {
                let msg = format!(
                    "field `{ident}` is neither captured by the pattern `{}` nor a query parameter; capture it with `{{{ident}}}`, make it an `Option<_>`, or mark it `#[query]`",
                    pattern.value()
                );
                return Err(syn::Error::new(ident.span(), msg));
            }
        };
        classified.push(Field { ident, ty: &f.ty, source, attrs: &f.attrs });
    }

    let from_parts = from_parts(
        name,
        &classified,
        fields.is_empty() && matches!(input.data, Data::Struct(ref s) if matches!(s.fields, Fields::Unit)),
    );
    let display = display(&pieces, &classified);
    let described = describe(&input.attrs, &classified);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let pattern_str = pattern.value();
    // `FromRequest` for each route rather than one blanket impl over `Route`, so that
    // an argument that is no extractor is reported as such, not as "not a route".
    let mut with_state = input.generics.clone();
    with_state.params.push(syn::parse_quote!(__S));
    let (state_generics, _, _) = with_state.split_for_impl();
    Ok(quote! {
        impl #state_generics ::kiln::FromRequest<__S> for #name #ty_generics #where_clause {
            fn from_request(
                __cx: &::kiln::RequestContext<'_, __S>,
            ) -> ::core::result::Result<Self, ::kiln::rejection::Rejection> {
                ::kiln::__route_from_request(__cx)
            }
        }

        impl #impl_generics ::kiln::Route for #name #ty_generics #where_clause {
            const PATTERN: &'static str = #pattern_str;
            const METHOD: ::kiln::Method = ::kiln::Method::#method;

            fn from_parts(
                __params: &::kiln::routing::PathParams<'_, '_>,
                __query: ::core::option::Option<&str>,
            ) -> ::core::result::Result<Self, ::kiln::rejection::Rejection> {
                #from_parts
            }

            #described
        }

        impl #impl_generics ::core::fmt::Display for #name #ty_generics #where_clause {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #display
            }
        }
    })
}

/// `Route::DOC` and `Route::parameters`, for the API document (`kiln::openapi`): the
/// struct's doc comment, and each field's name, doc comment, place and type. Each type is probed
/// where it is concrete, so one with a `JsonSchema` of its own is described by it
/// (the probe is kiln's; see `kiln::__private::Probe`).
fn describe(attrs: &[syn::Attribute], fields: &[Field<'_>]) -> TokenStream {
    let doc = doc_comment(attrs);
    let doc = (!doc.is_empty()).then(|| quote! { const DOC: &'static str = #doc; });
    let private = quote!(::kiln::__private);
    let params = fields.iter().map(|f| {
        let name = f.ident.to_string();
        let (in_path, required, ty) = match f.source {
            Source::Capture | Source::Wildcard => (true, true, f.ty),
            Source::Query(Some(inner)) => (false, false, inner),
            Source::Query(None) => (false, true, f.ty),
        };
        let doc = doc_comment(f.attrs);
        quote! {
            #private::RouteParam {
                name: #name,
                doc: #doc,
                in_path: #in_path,
                required: #required,
                ty: (&#private::Probe::<#ty>::new()).param_type(),
            }
        }
    });
    let parameters = (!fields.is_empty()).then(|| {
        quote! {
            fn parameters() -> ::std::vec::Vec<#private::RouteParam> {
                #[allow(unused_imports)]
                use #private::{ProbeName as _, ProbeSchema as _};
                ::std::vec![#(#params),*]
            }
        }
    });
    quote! { #doc #parameters }
}

/// The `///` lines of `attrs`, joined, each without the one space after `///`.
fn doc_comment(attrs: &[syn::Attribute]) -> String {
    let lines = attrs.iter().filter(|a| a.path().is_ident("doc")).filter_map(|a| match &a.meta {
        syn::Meta::NameValue(syn::MetaNameValue {
            value: syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }),
            ..
        }) => Some(s.value()),
        _ => None,
    });
    let lines: Vec<String> = lines.map(|l| l.strip_prefix(' ').unwrap_or(&l).to_owned()).collect();
    lines.join("\n").trim().to_owned()
}

/// `T` when `ty` is spelled `Option<T>` (or `std::option::Option<T>`).
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match args.args.first()? {
        syn::GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

fn from_parts(name: &Ident, fields: &[Field<'_>], unit: bool) -> TokenStream {
    let private = quote!(::kiln::__private);
    let slots = fields.iter().filter_map(|f| match f.source {
        Source::Query(inner) => {
            let ident = f.ident;
            let ty = inner.unwrap_or(f.ty);
            Some(quote! { let mut #ident: ::core::option::Option<#ty> = ::core::option::Option::None; })
        }
        _ => None,
    });
    let arms = fields.iter().filter_map(|f| match f.source {
        Source::Query(inner) => {
            let ident = f.ident;
            let key = ident.to_string();
            let ty = inner.unwrap_or(f.ty);
            // A parameter given twice is refused rather than one of the two picked: a
            // link or form that sends both is a bug the client should hear about.
            Some(quote_spanned! {ty.span()=>
                #key => {
                    if #ident.is_some() {
                        return ::core::result::Result::Err(#private::repeated_query(#key));
                    }
                    #ident = ::core::option::Option::Some(#private::parse_query::<#ty>(#key, &__value)?);
                }
            })
        }
        _ => None,
    });
    let has_query = fields.iter().any(|f| matches!(f.source, Source::Query(_)));
    let scan = has_query.then(|| {
        quote! {
            if let ::core::option::Option::Some(__query) = __query {
                for (__key, __value) in #private::query_pairs(__query) {
                    match &*__key {
                        #(#arms)*
                        _ => {}
                    }
                }
            }
        }
    });
    let inits = fields.iter().map(|f| {
        let ident = f.ident;
        let key = ident.to_string();
        let ty = f.ty;
        match f.source {
            Source::Capture | Source::Wildcard => quote_spanned! {ty.span()=>
                #ident: #private::parse_capture::<#ty>(__params, #key)?
            },
            Source::Query(Some(_)) => quote! { #ident },
            Source::Query(None) => quote! {
                #ident: match #ident {
                    ::core::option::Option::Some(__v) => __v,
                    ::core::option::Option::None => return ::core::result::Result::Err(#private::missing_query(#key)),
                }
            },
        }
    });
    let build = if unit { quote!(#name) } else { quote!(#name { #(#inits),* }) };
    let unused = (!has_query).then(|| quote!(let _ = __query;));
    let unused_params = fields.iter().all(|f| matches!(f.source, Source::Query(_))).then(|| quote!(let _ = __params;));
    quote! {
        #unused
        #unused_params
        #(#slots)*
        #scan
        ::core::result::Result::Ok(#build)
    }
}

fn display(pieces: &[Piece], fields: &[Field<'_>]) -> TokenStream {
    let private = quote!(::kiln::__private);
    let path = pieces.iter().map(|p| match p {
        Piece::Literal(text) => quote! { __f.write_str(#text)?; },
        Piece::Capture(c) => {
            let ident = Ident::new(c, Span::call_site());
            quote! { #private::write_segment(__f, &self.#ident)?; }
        }
        Piece::Wildcard(c) => {
            let ident = Ident::new(c, Span::call_site());
            quote! { #private::write_rest(__f, &self.#ident)?; }
        }
    });
    let query = fields.iter().filter_map(|f| {
        let ident = f.ident;
        let key = ident.to_string();
        match f.source {
            Source::Query(Some(_)) => Some(quote! {
                if let ::core::option::Option::Some(__v) = &self.#ident {
                    #private::write_query(__f, &mut __first, #key, __v)?;
                }
            }),
            Source::Query(None) => Some(quote! { #private::write_query(__f, &mut __first, #key, &self.#ident)?; }),
            _ => None,
        }
    });
    let query: Vec<_> = query.collect();
    let first = (!query.is_empty()).then(|| quote!(let mut __first = true;));
    quote! {
        #(#path)*
        #first
        #(#query)*
        ::core::result::Result::Ok(())
    }
}
