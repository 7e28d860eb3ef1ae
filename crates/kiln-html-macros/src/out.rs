//! The generated code of one block: static markup merged into string literals, and
//! the code between them. `live_html!` reads the same pieces as statics and slots
//! (`live.rs`).

use proc_macro2::{Ident, TokenStream};
use quote::quote;

pub(crate) enum Piece {
    Static(String),
    /// Statements writing markup into the buffer.
    Code(TokenStream),
    /// A statement that writes nothing but must stay in scope for what follows
    /// (`@let`, a type check): never a slot of its own in `live_html!`.
    Let(TokenStream),
    /// `live_html!` only: an expression giving a nested slot (a part or a list).
    Slot(TokenStream),
}

#[derive(Default)]
pub(crate) struct Out {
    pieces: Vec<Piece>,
}

impl Out {
    pub(crate) fn push_static(&mut self, text: &str) {
        if let Some(Piece::Static(last)) = self.pieces.last_mut() {
            last.push_str(text);
        } else {
            self.pieces.push(Piece::Static(text.to_owned()));
        }
    }

    pub(crate) fn push_code(&mut self, code: TokenStream) {
        self.pieces.push(Piece::Code(code));
    }

    pub(crate) fn push_let(&mut self, code: TokenStream) {
        self.pieces.push(Piece::Let(code));
    }

    pub(crate) fn push_slot(&mut self, slot: TokenStream) {
        self.pieces.push(Piece::Slot(slot));
    }

    pub(crate) fn into_pieces(self) -> Vec<Piece> {
        self.pieces
    }

    /// Bytes of static markup in this block (loops counted once), for the first
    /// allocation's size.
    pub(crate) fn static_len(&self) -> usize {
        self.pieces.iter().map(|p| if let Piece::Static(s) = p { s.len() } else { 0 }).sum()
    }

    pub(crate) fn finish(self, buf: &Ident) -> TokenStream {
        let statements = self.pieces.into_iter().map(|piece| match piece {
            Piece::Static(text) if text.len() == 1 => {
                let c = text.chars().next().unwrap_or_default();
                quote!(#buf.push(#c);)
            }
            Piece::Static(text) => quote!(#buf.push_str(#text);),
            Piece::Code(code) | Piece::Let(code) => code,
            Piece::Slot(_) => unreachable!("only `live_html!` pushes slots, and it reads the pieces itself"),
        });
        quote!(#(#statements)*)
    }
}

/// Escapes `&`, `<`, `>` and `"` at compile time, as the runtime's `escape` does.
pub(crate) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            c => escaped.push(c),
        }
    }
    escaped
}
