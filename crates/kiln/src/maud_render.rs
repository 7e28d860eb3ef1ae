//! maud's markup as a response (cargo feature `maud`): kiln's own HTML system is
//! `kiln::html!`; an app that prefers maud adds the `maud` crate itself and returns
//! `maud::Markup` from its handlers, as with axum. [`Rendered`] renders a
//! `maud::Render` value straight into the connection's reusable body buffer; [`Reserve`],
//! [`Int`] and [`Text`] are splices that render large pages faster.

use kiln_http::Response;
use maud::{Markup, Render};

use crate::html::{HTML, Html};
use crate::response::{IntoResponse, default_content_type};

impl IntoResponse for Html<Markup> {
    fn into_response(self, res: &mut Response) {
        self.0.into_response(res);
    }
}

/// Markup from `maud::html!`: its string becomes the body buffer, uncopied.
impl IntoResponse for Markup {
    fn into_response(self, res: &mut Response) {
        Html(self.into_string()).into_response(res);
    }
}

/// A `maud::Render` value rendered with `render_to` straight into the response's
/// body buffer, which the connection reuses from one request to the next: no
/// intermediate string, no copy, and no allocation once the buffer has grown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rendered<T>(pub T);

impl<T: Render> IntoResponse for Rendered<T> {
    fn into_response(self, res: &mut Response) {
        default_content_type(res, HTML);
        let body = res.body_mut();
        // The body is empty here, so this checks no bytes and keeps the capacity.
        let mut buf = String::from_utf8(std::mem::take(body)).unwrap_or_default();
        self.0.render_to(&mut buf);
        *res.body_mut() = buf.into_bytes();
    }
}

/// A splice for `maud::html!` that renders nothing and reserves `n` more bytes in the
/// markup's own buffer.
///
/// `html!` builds its string by repeated growth, copying everything written so far at
/// each step; a large page whose size is known up front (a table of `rows × cols`)
/// renders faster when the buffer is grown once, first.
///
/// ```
/// use kiln::Reserve;
/// use maud::html;
///
/// let cells = 1000;
/// let page = html! {
///     (Reserve(cells * "<td>1000</td>".len()))
///     @for i in 0..cells { td { (i) } }
/// };
/// assert!(page.0.capacity() >= cells * 13);
/// assert!(page.0.starts_with("<td>0</td><td>1</td>"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reserve(pub usize);

impl Render for Reserve {
    fn render_to(&self, buffer: &mut String) {
        buffer.reserve(self.0);
    }
}

/// An integer for `maud::html!` that renders like `(n)` does, byte by byte into the
/// markup buffer.
///
/// maud renders an integer by copying its decimal form with a `memcpy` call, and for a
/// number of two or three digits the call costs more than the copy. A page of many
/// numbers (a large table) renders markedly faster with `(Int(n))`.
///
/// ```
/// use kiln::Int;
/// use maud::html;
///
/// let row = html! { @for col in [1u32, 20, 4_000_000_000] { td { (Int(col)) } } };
/// assert_eq!(row.0, "<td>1</td><td>20</td><td>4000000000</td>");
/// assert_eq!(html! { (Int(-7i64)) }.0, "-7");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Int<T>(pub T);

impl<T: itoa::Integer> Render for Int<T> {
    fn render_to(&self, buffer: &mut String) {
        let mut digits = itoa::Buffer::new();
        let text = digits.format(self.0);
        buffer.reserve(text.len());
        for b in text.bytes() {
            // ASCII: each push is one inlined byte store.
            buffer.push(char::from(b));
        }
    }
}

/// Text for `maud::html!` that renders like `(s)` does, escaping `&`, `<`, `>` and `"`,
/// but copies each stretch between two such characters at once.
///
/// maud escapes a string byte by byte, one push (and capacity check) per byte; most
/// text needs no escaping at all, so `(Text(s))` renders a text-heavy page faster.
///
/// ```
/// use kiln::Text;
/// use maud::html;
///
/// let message = "<script>alert(\"hi\")</script> & 'more'";
/// assert_eq!(html! { td { (Text(message)) } }.0, html! { td { (message) } }.0);
/// assert_eq!(html! { (Text("a<b")) }.0, "a&lt;b");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Text<'a>(pub &'a str);

impl Render for Text<'_> {
    fn render_to(&self, buffer: &mut String) {
        let text = self.0;
        buffer.reserve(text.len());
        let mut copied = 0;
        for (i, b) in text.bytes().enumerate() {
            let entity = match b {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => continue,
            };
            // `i` is an ASCII byte, so both slices end on character boundaries.
            buffer.push_str(&text[copied..i]);
            buffer.push_str(entity);
            copied = i + 1;
        }
        buffer.push_str(&text[copied..]);
    }
}

#[cfg(test)]
mod tests {
    use maud::{Escaper, Render};

    use super::Text;

    #[test]
    fn text_escapes_exactly_as_maud_does() {
        let cases = [
            "",
            "plain",
            "&",
            "<<>>",
            "\"quoted\" & 'single'",
            "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
            "フレームワークのベンチマーク<&>",
            "ends with &",
            "&starts",
        ];
        for case in cases {
            let mut ours = String::new();
            Text(case).render_to(&mut ours);
            let mut theirs = String::new();
            std::fmt::Write::write_str(&mut Escaper::new(&mut theirs), case).expect("escape");
            assert_eq!(ours, theirs, "{case:?}");
        }
    }
}
