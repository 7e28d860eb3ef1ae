//! maud's syntax into [`Node`]s.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Ident, LitStr, Pat, Token, braced, bracketed, parenthesized};

use crate::ast::{Arm, Attr, AttrValue, Element, Else, If, Node};

/// Parses markup until the end of the stream.
pub(crate) fn nodes(input: ParseStream<'_>) -> syn::Result<Vec<Node>> {
    let mut nodes = Vec::new();
    while !input.is_empty() {
        nodes.push(node(input)?);
    }
    Ok(nodes)
}

fn block(input: ParseStream<'_>) -> syn::Result<Vec<Node>> {
    let content;
    braced!(content in input);
    nodes(&content)
}

fn node(input: ParseStream<'_>) -> syn::Result<Node> {
    if input.peek(LitStr) {
        return Ok(Node::Text(input.parse()?));
    }
    if input.peek(syn::token::Paren) {
        let content;
        let paren = parenthesized!(content in input);
        let expr: Expr = content.parse()?;
        return Ok(Node::Splice(Box::new(expr), paren.span.join()));
    }
    if input.peek(Token![@]) {
        input.parse::<Token![@]>()?;
        return control(input);
    }
    if input.peek(Ident::peek_any) {
        return element(input).map(Node::Element);
    }
    Err(input.error(
        "expected an element (`div { .. }`), text (`\"..\"`), a splice (`(value)`) or `@if`/`@for`/`@match`/`@let`",
    ))
}

/// Tokens up to (not including) the next `{ .. }` group at this level.
fn until_brace(input: ParseStream<'_>) -> syn::Result<TokenStream> {
    let mut tokens = TokenStream::new();
    while !input.is_empty() && !input.peek(syn::token::Brace) {
        tokens.extend([input.parse::<TokenTree>()?]);
    }
    if tokens.is_empty() {
        return Err(input.error("expected an expression"));
    }
    Ok(tokens)
}

fn control(input: ParseStream<'_>) -> syn::Result<Node> {
    let keyword = input.fork().call(Ident::parse_any)?;
    match keyword.to_string().as_str() {
        "if" => Ok(Node::If(if_chain(input)?)),
        "for" => {
            input.parse::<Token![for]>()?;
            let pat = Box::new(Pat::parse_multi_with_leading_vert(input)?);
            input.parse::<Token![in]>()?;
            let (expr, key) = for_source(until_brace(input)?)?;
            let body = block(input)?;
            Ok(Node::For { pat, expr, key, body, span: keyword.span() })
        }
        "match" => {
            input.parse::<Token![match]>()?;
            let expr = Box::new(syn::parse2(until_brace(input)?)?);
            let content;
            braced!(content in input);
            let mut arms = Vec::new();
            while !content.is_empty() {
                let pat = Pat::parse_multi_with_leading_vert(&content)?;
                let guard = if content.peek(Token![if]) {
                    content.parse::<Token![if]>()?;
                    let mut tokens = TokenStream::new();
                    while !content.peek(Token![=>]) {
                        tokens.extend([content.parse::<TokenTree>()?]);
                    }
                    Some(tokens)
                } else {
                    None
                };
                content.parse::<Token![=>]>()?;
                let body = if content.peek(syn::token::Brace) { block(&content)? } else { vec![node(&content)?] };
                if content.peek(Token![,]) {
                    content.parse::<Token![,]>()?;
                }
                arms.push(Arm { pat, guard, body });
            }
            Ok(Node::Match { expr, arms, span: keyword.span() })
        }
        "let" => {
            let mut tokens = TokenStream::new();
            while !input.peek(Token![;]) {
                if input.is_empty() {
                    return Err(input.error("`@let` ends with `;`"));
                }
                tokens.extend([input.parse::<TokenTree>()?]);
            }
            input.parse::<Token![;]>()?;
            Ok(Node::Let(tokens))
        }
        _ => Err(syn::Error::new(keyword.span(), "expected `@if`, `@for`, `@match` or `@let`")),
    }
}

/// `rows` or `rows; key = row.id`: what a `@for` iterates over, and its items' key.
fn for_source(tokens: TokenStream) -> syn::Result<(Box<Expr>, Option<Box<Expr>>)> {
    let parser = |input: ParseStream<'_>| {
        let mut source = TokenStream::new();
        while !input.is_empty() && !input.peek(Token![;]) {
            source.extend([input.parse::<TokenTree>()?]);
        }
        let expr = Box::new(syn::parse2(source)?);
        if input.is_empty() {
            return Ok((expr, None));
        }
        input.parse::<Token![;]>()?;
        let word = input.call(Ident::parse_any)?;
        if word != "key" {
            return Err(syn::Error::new(word.span(), "expected `key = expr` after `;` in `@for`"));
        }
        input.parse::<Token![=]>()?;
        Ok((expr, Some(Box::new(input.parse()?))))
    };
    parser.parse2(tokens)
}

fn if_chain(input: ParseStream<'_>) -> syn::Result<If> {
    let span = input.parse::<Token![if]>()?.span;
    let cond = until_brace(input)?;
    let then = block(input)?;
    let otherwise = if input.peek(Token![@]) && input.peek2(Token![else]) {
        input.parse::<Token![@]>()?;
        input.parse::<Token![else]>()?;
        if input.peek(Token![if]) {
            Some(Else::If(Box::new(if_chain(input)?)))
        } else {
            Some(Else::Block(block(input)?))
        }
    } else {
        None
    };
    Ok(If { cond, then, otherwise, span })
}

/// A name made of words joined by `-`: `data-id`, `http-equiv`, `accept-charset`.
fn name(input: ParseStream<'_>) -> syn::Result<(String, proc_macro2::Span)> {
    let first = input.call(Ident::parse_any)?;
    let mut name = first.to_string();
    let mut span = first.span();
    while input.peek(Token![-]) {
        input.parse::<Token![-]>()?;
        let next = input.call(Ident::parse_any)?;
        name.push('-');
        name.push_str(&next.to_string());
        span = span.join(next.span()).unwrap_or(span);
    }
    Ok((name, span))
}

fn element(input: ParseStream<'_>) -> syn::Result<Element> {
    let (tag, span) = name(input)?;
    let mut attrs = Vec::new();
    loop {
        if input.peek(Token![.]) {
            let dot = input.parse::<Token![.]>()?;
            let class = if input.peek(LitStr) {
                let lit: LitStr = input.parse()?;
                lit.value()
            } else {
                name(input)?.0
            };
            let value = if input.peek(syn::token::Bracket) {
                let content;
                bracketed!(content in input);
                AttrValue::Toggle(content.parse()?)
            } else {
                AttrValue::Literal(LitStr::new(&class, dot.span))
            };
            attrs.push(Attr { name: format!(".{class}"), span: dot.span, value });
        } else if input.peek(Token![#]) {
            let hash = input.parse::<Token![#]>()?;
            let id = if input.peek(LitStr) { input.parse::<LitStr>()?.value() } else { name(input)?.0 };
            attrs.push(Attr {
                name: "id".into(),
                span: hash.span,
                value: AttrValue::Literal(LitStr::new(&id, hash.span)),
            });
        } else if input.peek(Ident::peek_any) {
            let (mut attr, mut span) = name(input)?;
            if attr == "on" && input.peek(Token![:]) {
                // `on:click=(Event::Increment)`: an event of a live view.
                input.parse::<Token![:]>()?;
                let (event, event_span) = name(input)?;
                attr = format!("on:{event}");
                span = span.join(event_span).unwrap_or(span);
            }
            let value = if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                if input.peek(LitStr) {
                    AttrValue::Literal(input.parse()?)
                } else if input.peek(syn::LitInt) {
                    AttrValue::Int(input.parse()?)
                } else if input.peek(syn::token::Paren) {
                    let content;
                    parenthesized!(content in input);
                    AttrValue::Expr(content.parse()?)
                } else if input.peek(syn::token::Bracket) {
                    let content;
                    bracketed!(content in input);
                    AttrValue::Optional(content.parse()?)
                } else {
                    return Err(input.error("an attribute's value is `\"text\"`, `(expr)` or `[option]`"));
                }
            } else if input.peek(syn::token::Bracket) {
                let content;
                bracketed!(content in input);
                AttrValue::Toggle(content.parse()?)
            } else {
                AttrValue::Present
            };
            attrs.push(Attr { name: attr, span, value });
        } else {
            break;
        }
    }
    if input.peek(Token![;]) {
        let semi = input.parse::<Token![;]>()?;
        return Ok(Element { name: tag, span, attrs, body: None, body_span: semi.span });
    }
    if input.peek(syn::token::Brace) {
        let body_span = input.cursor().group(Delimiter::Brace).map_or(span, |(_, s, _)| s.join());
        let body = block(input)?;
        return Ok(Element { name: tag, span, attrs, body: Some(body), body_span });
    }
    Err(input.error(format!("expected `{{ .. }}` with the children of `<{tag}>`, or `;` for a void element")))
}

/// The macro's input: `[runtime path] markup…`.
pub(crate) fn input(tokens: TokenStream) -> syn::Result<(TokenStream, Vec<Node>)> {
    let parser = |input: ParseStream<'_>| {
        let content;
        bracketed!(content in input);
        let rt: TokenStream = content.parse()?;
        Ok((rt, nodes(input)?))
    };
    parser.parse2(tokens)
}
