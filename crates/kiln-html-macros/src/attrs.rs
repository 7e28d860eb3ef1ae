//! Attributes: each checked against the element's own and the global ones, its value
//! against the type the standard gives it, and rendered.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{self, AttrValue};
use crate::expand::Expander;
use crate::model::{self, GLOBAL, Value};
use crate::out::{Out, escape};

impl Expander {
    pub(crate) fn attributes(&mut self, e: &ast::Element, info: &model::Element, out: &mut Out) {
        let mut seen: Vec<&str> = Vec::new();
        let mut class_written = false;
        for attr in &e.attrs {
            let is_class = attr.name.starts_with('.') || attr.name == "class";
            if is_class {
                if !class_written {
                    self.classes(e, out);
                    class_written = true;
                }
                continue;
            }
            if seen.contains(&attr.name.as_str()) {
                self.error(attr.span, format!("`{}` is given twice", attr.name));
                continue;
            }
            seen.push(&attr.name);
            if let Some(event) = attr.name.strip_prefix("on:") {
                self.event(event, attr, out);
                continue;
            }
            let value = if attr.name.starts_with("data-") || attr.name.starts_with("aria-") {
                Value::Text
            } else if let Some(spec) = info.attrs.iter().chain(GLOBAL).find(|a| a.name == attr.name) {
                spec.value
            } else {
                let own: Vec<String> = info.attrs.iter().map(|a| format!("`{}`", a.name)).collect();
                let own = if own.is_empty() { String::new() } else { format!("{} and ", own.join(", ")) };
                self.error(
                    attr.span,
                    format!("`<{}>` has no attribute `{}`: it takes {own}the global attributes", info.name, attr.name),
                );
                continue;
            };
            self.attribute(info.name, attr, value, out);
        }
        for required in info.required {
            if !seen.contains(required) {
                self.error(e.span, format!("`<{}>` requires the attribute `{required}`", info.name));
            }
        }
    }

    fn attribute(&mut self, element: &str, attr: &ast::Attr, value: Value, out: &mut Out) {
        let name = &attr.name;
        let (rt, buf) = (self.rt.clone(), self.buf.clone());
        let open = format!(" {name}=\"");
        match (&attr.value, value) {
            (AttrValue::Present, Value::Bool) => out.push_static(&format!(" {name}")),
            (AttrValue::Toggle(cond), Value::Bool) => {
                let text = format!(" {name}");
                out.push_code(quote!(if #cond { #buf.push_str(#text); }));
            }
            (_, Value::Bool) => self.error(
                attr.span,
                format!("`{name}` is a boolean attribute: write `{name}` (present) or `{name}[condition]`"),
            ),
            (AttrValue::Present | AttrValue::Toggle(_), _) => {
                self.error(attr.span, format!("`{name}` needs a value: `{name}=\"..\"`, `{name}=(expr)` or `{name}=[option]`"))
            }
            (AttrValue::Literal(lit), Value::Text) => out.push_static(&format!("{open}{}\"", escape(&lit.value()))),
            (AttrValue::Int(lit), Value::Text | Value::Integer) => out.push_static(&format!("{open}{}\"", lit.base10_digits())),
            (AttrValue::Literal(lit), Value::Integer) => match lit.value().parse::<i64>() {
                Ok(n) => out.push_static(&format!("{open}{n}\"")),
                Err(_) => self.error(lit.span(), format!("`{name}` takes an integer")),
            },
            (AttrValue::Literal(lit), Value::Url) if lit.value().starts_with('#') => {
                out.push_static(&format!("{open}{}\"", escape(&lit.value())));
            }
            (AttrValue::Literal(lit), Value::Url) => self.error(
                lit.span(),
                format!(
                    "`{name}` takes a typed route, an `Asset` or an `ExternalUrl`, not a string: write `{name}=(ExternalUrl({:?}))` for another site, `{name}=(Asset::new(..))` for a file of this one, or a route value",
                    lit.value()
                ),
            ),
            (AttrValue::Int(lit), Value::Url) => self.error(lit.span(), format!("`{name}` takes a link, not a number")),
            (AttrValue::Literal(lit), Value::Keyword(_, words)) => {
                if words.contains(&lit.value().as_str()) {
                    out.push_static(&format!("{open}{}\"", lit.value()));
                } else {
                    let list: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
                    self.error(
                        lit.span(),
                        format!("{:?} is not a `{name}` of `<{element}>`: it is one of {}", lit.value(), list.join(", ")),
                    );
                }
            }
            (AttrValue::Int(lit), Value::Keyword(..)) => {
                self.error(lit.span(), format!("`{name}` takes a keyword, as a string or a typed value"))
            }
            (AttrValue::Expr(expr), value) => {
                out.push_static(&open);
                out.push_code(value_code(&rt, &buf, value, expr, Arg::Expr));
                out.push_static("\"");
            }
            (AttrValue::Optional(expr), value) => {
                let v = format_ident!("__kiln_value", span = proc_macro2::Span::mixed_site().located_at(expr.span()));
                let write = value_code(&rt, &buf, value, expr, Arg::Reference(&v));
                let close = '"';
                out.push_code(quote_spanned!(expr.span()=> if let ::core::option::Option::Some(#v) = &(#expr) {
                    #buf.push_str(#open);
                    #write
                    #buf.push(#close);
                }));
            }
        }
    }

    /// Every `.class`, `.class[cond]` and `class=..` of an element, as one `class` attribute.
    fn classes(&mut self, e: &ast::Element, out: &mut Out) {
        let buf = self.buf.clone();
        let rt = self.rt.clone();
        let mut fixed: Vec<String> = Vec::new();
        let mut dynamic: Vec<TokenStream> = Vec::new();
        let mut toggles: Vec<(String, &syn::Expr)> = Vec::new();
        for attr in e.attrs.iter().filter(|a| a.name.starts_with('.') || a.name == "class") {
            let class = attr.name.strip_prefix('.');
            match (&attr.value, class) {
                (AttrValue::Literal(lit), _) => fixed.push(escape(&lit.value())),
                (AttrValue::Toggle(cond), Some(class)) => toggles.push((escape(class), cond)),
                (AttrValue::Expr(expr), None) => dynamic.push(quote_spanned!(expr.span()=> #rt::attr(&(#expr), #buf);)),
                _ => self
                    .error(attr.span, "`class` takes `\"text\"` or `(expr)`; a class toggles with `.name[condition]`"),
            }
        }
        if fixed.is_empty() && dynamic.is_empty() {
            if toggles.is_empty() {
                return;
            }
            let open = format_ident!("__kiln_class_open", span = proc_macro2::Span::mixed_site());
            let arms = toggles.iter().map(|(class, cond)| {
                let first = format!(" class=\"{class}");
                let next = format!(" {class}");
                quote!(if #cond { #buf.push_str(if #open { #next } else { #first }); #open = true; })
            });
            out.push_code(quote!({
                let mut #open = false;
                #(#arms)*
                if #open { #buf.push('"'); }
            }));
            return;
        }
        out.push_static(" class=\"");
        out.push_static(&fixed.join(" "));
        for (i, code) in dynamic.into_iter().enumerate() {
            if i > 0 || !fixed.is_empty() {
                out.push_static(" ");
            }
            out.push_code(code);
        }
        for (class, cond) in toggles {
            let text = format!(" {class}");
            out.push_code(quote!(if #cond { #buf.push_str(#text); }));
        }
        out.push_static("\"");
    }
}

/// The code rendering an attribute value of type `value`, `arg` being a reference to it.
/// How a value reaches the code that writes it.
enum Arg<'a> {
    /// The attribute's expression itself.
    Expr,
    /// A variable holding a reference to it (an optional attribute's `Some`).
    Reference(&'a syn::Ident),
}

fn value_code(rt: &TokenStream, buf: &syn::Ident, value: Value, expr: &syn::Expr, arg: Arg<'_>) -> TokenStream {
    let span = expr.span();
    // Keywords are `Copy` values; taken by value there is no `*&` for clippy to flag.
    if let Value::Keyword(ty, _) = value {
        let ty = format_ident!("{}", ty, span = span);
        let value = format_ident!("__kiln_keyword", span = proc_macro2::Span::mixed_site().located_at(span));
        let taken = match arg {
            Arg::Expr => quote_spanned!(span=> #expr),
            Arg::Reference(v) => quote_spanned!(span=> *#v),
        };
        return quote_spanned!(span=> { let #value = #taken; #rt::keyword::<#rt::#ty>(#value, #buf); });
    }
    let arg = match arg {
        Arg::Expr => quote_spanned!(span=> &(#expr)),
        Arg::Reference(v) => quote!(#v),
    };
    match value {
        Value::Text | Value::Bool => quote_spanned!(span=> #rt::attr(#arg, #buf);),
        Value::Url => quote_spanned!(span=> #rt::href(#arg, #buf);),
        Value::Integer => quote_spanned!(span=> #rt::number(#arg, #buf);),
        Value::Keyword(..) => unreachable!("keywords are written above"),
    }
}
