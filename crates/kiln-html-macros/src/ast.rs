//! The markup as written, parsed from maud's syntax.

use proc_macro2::{Span, TokenStream};
use syn::{Expr, LitStr, Pat};

pub(crate) enum Node {
    Element(Element),
    /// A string literal, escaped at compile time.
    Text(LitStr),
    /// `(expr)`: a value rendered at run time.
    Splice(Box<Expr>, Span),
    If(If),
    For {
        pat: Box<Pat>,
        expr: Box<Expr>,
        /// `@for row in rows; key = row.id { .. }`: what identifies an item of a live
        /// list across renderings (`html!` has no use for it and ignores it).
        key: Option<Box<Expr>>,
        body: Vec<Node>,
        span: Span,
    },
    Match {
        expr: Box<Expr>,
        arms: Vec<Arm>,
        span: Span,
    },
    /// `@let pat = expr;`, the tokens after `@`.
    Let(TokenStream),
}

pub(crate) struct If {
    /// The condition, `let` pattern included, as written.
    pub(crate) cond: TokenStream,
    pub(crate) then: Vec<Node>,
    pub(crate) otherwise: Option<Else>,
    pub(crate) span: Span,
}

pub(crate) enum Else {
    If(Box<If>),
    Block(Vec<Node>),
}

pub(crate) struct Arm {
    pub(crate) pat: Pat,
    pub(crate) guard: Option<TokenStream>,
    pub(crate) body: Vec<Node>,
}

pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) attrs: Vec<Attr>,
    /// `None` for `name;`.
    pub(crate) body: Option<Vec<Node>>,
    pub(crate) body_span: Span,
}

pub(crate) struct Attr {
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) value: AttrValue,
}

pub(crate) enum AttrValue {
    /// `name`: a boolean, present.
    Present,
    /// `name[cond]`: a boolean, present when `cond`; `.class[cond]`: the class when `cond`.
    Toggle(Expr),
    /// `name="text"`.
    Literal(LitStr),
    /// `name=42`.
    Int(syn::LitInt),
    /// `name=(expr)`.
    Expr(Expr),
    /// `name=[option]`: present when `Some`.
    Optional(Expr),
}

impl Node {
    /// The span errors about this node point at.
    pub(crate) fn span(&self) -> Span {
        match self {
            Node::Element(e) => e.span,
            Node::Text(lit) => lit.span(),
            Node::Splice(_, span) | Node::For { span, .. } | Node::Match { span, .. } => *span,
            Node::If(i) => i.span,
            Node::Let(tokens) => tokens.clone().into_iter().next().map_or_else(Span::call_site, |t| t.span()),
        }
    }
}
