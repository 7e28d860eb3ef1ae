//! Values rendered as text: escaped, straight into the output string.

use std::borrow::Cow;
use std::fmt;

/// Something that writes its HTML into a string: text escaped, markup as it is.
///
/// Text values ([`str`], [`String`], integers, `char`, [`fmt::Arguments`]) escape
/// `&`, `<`, `>` and `"`; a [`Fragment`](crate::Fragment) and
/// [`PreEscaped`](crate::PreEscaped) are already markup.
pub trait Render {
    /// Appends this value's HTML to `buf`.
    fn render_to(&self, buf: &mut String);
}

impl<T: Render + ?Sized> Render for &T {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        (**self).render_to(buf);
    }
}

/// Appends `text` with `&`, `<`, `>` and `"` escaped: safe in text and in a quoted
/// attribute value.
///
/// Each stretch between two such characters is copied at once: most text needs no
/// escaping, and a push per byte costs a capacity check per byte.
#[inline]
pub fn escape(text: &str, buf: &mut String) {
    buf.reserve(text.len());
    let mut copied = 0;
    for (i, b) in text.bytes().enumerate() {
        let entity = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => continue,
        };
        // `b` is ASCII, so both slices end on character boundaries.
        buf.push_str(&text[copied..i]);
        buf.push_str(entity);
        copied = i + 1;
    }
    buf.push_str(&text[copied..]);
}

impl Render for str {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        escape(self, buf);
    }
}

impl Render for String {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        escape(self, buf);
    }
}

impl Render for Cow<'_, str> {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        escape(self, buf);
    }
}

impl Render for Box<str> {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        escape(self, buf);
    }
}

impl Render for char {
    #[inline]
    fn render_to(&self, buf: &mut String) {
        escape(self.encode_utf8(&mut [0; 4]), buf);
    }
}

impl Render for fmt::Arguments<'_> {
    fn render_to(&self, buf: &mut String) {
        match self.as_str() {
            Some(text) => escape(text, buf),
            None => {
                let _ = fmt::write(&mut Escaper(buf), *self);
            }
        }
    }
}

/// A `fmt::Write` that escapes what passes through it.
pub(crate) struct Escaper<'a>(pub(crate) &'a mut String);

impl fmt::Write for Escaper<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        escape(s, self.0);
        Ok(())
    }
}

/// Appends an integer's decimal form one byte at a time: for the two or three digits
/// of a typical number, a `memcpy` call costs more than the copy.
#[inline]
pub(crate) fn push_integer<T: itoa::Integer>(n: T, buf: &mut String) {
    let mut digits = itoa::Buffer::new();
    let text = digits.format(n);
    buf.reserve(text.len());
    for b in text.bytes() {
        buf.push(char::from(b));
    }
}

macro_rules! integers {
    ($($t:ty)*) => {$(
        impl Render for $t {
            #[inline]
            fn render_to(&self, buf: &mut String) {
                push_integer(*self, buf);
            }
        }
    )*};
}

integers!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);

impl Render for f32 {
    fn render_to(&self, buf: &mut String) {
        let _ = fmt::write(buf, format_args!("{self}"));
    }
}

impl Render for f64 {
    fn render_to(&self, buf: &mut String) {
        let _ = fmt::write(buf, format_args!("{self}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_the_four_characters_and_nothing_else() {
        let cases = [
            ("", ""),
            ("plain", "plain"),
            ("&", "&amp;"),
            ("<<>>", "&lt;&lt;&gt;&gt;"),
            ("\"q\" & 's'", "&quot;q&quot; &amp; 's'"),
            ("フレームワーク<&>", "フレームワーク&lt;&amp;&gt;"),
            ("ends with &", "ends with &amp;"),
        ];
        for (text, escaped) in cases {
            let mut buf = String::new();
            text.render_to(&mut buf);
            assert_eq!(buf, escaped, "{text:?}");
        }
    }

    #[test]
    fn numbers_and_formatted_text_render_like_display() {
        let mut buf = String::new();
        0u8.render_to(&mut buf);
        (-42i64).render_to(&mut buf);
        u64::MAX.render_to(&mut buf);
        1.5f64.render_to(&mut buf);
        format_args!("<{}>", "&").render_to(&mut buf);
        'é'.render_to(&mut buf);
        assert_eq!(buf, "0-42184467440737095516151.5&lt;&amp;&gt;é");
    }
}
