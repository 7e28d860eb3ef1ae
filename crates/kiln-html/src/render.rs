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
/// Text is scanned eight bytes at a time for the four characters, and each stretch
/// between two of them is copied at once: most text needs no escaping, and a push per
/// byte costs a capacity check per byte. The last word is read ending at the text's
/// end, overlapping what was already scanned, rather than copied out and padded.
#[inline]
pub fn escape(text: &str, buf: &mut String) {
    let bytes = text.as_bytes();
    if bytes.len() < 8 {
        return escape_short(text, buf);
    }
    buf.reserve(bytes.len());
    let last = bytes.len() - 8;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let at = i.min(last);
        let Some(word) = bytes[at..].first_chunk::<8>() else { break };
        // Bytes before `i` in an overlapping last word were scanned already.
        let flags = specials(u64::from_le_bytes(*word)) & (u64::MAX << ((i - at) * 8));
        if flags == 0 {
            i = at + 8;
            continue;
        }
        // Straight to the first special byte: the lowest flag is a true one, unless
        // the mask above cut off the byte whose borrow raised it.
        i = at + (flags.trailing_zeros() / 8) as usize;
        let Some(entity) = entity(bytes[i]) else {
            i += 1;
            continue;
        };
        // The byte is ASCII, so both slices end on character boundaries.
        buf.push_str(&text[copied..i]);
        buf.push_str(entity);
        i += 1;
        copied = i;
    }
    buf.push_str(&text[copied..]);
}

/// [`escape`] for text shorter than a word.
fn escape_short(text: &str, buf: &mut String) {
    let mut copied = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if let Some(entity) = entity(b) {
            buf.push_str(&text[copied..i]);
            buf.push_str(entity);
            copied = i + 1;
        }
    }
    buf.push_str(&text[copied..]);
}

/// What a special byte is written as.
#[inline(always)]
fn entity(byte: u8) -> Option<&'static str> {
    match byte {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        _ => None,
    }
}

/// The high bit of each byte of `word` that is `&`, `<`, `>` or `"`, and perhaps of
/// bytes after one that is (the classic "has a zero byte" test).
///
/// Two tests cover the four characters: `<` (0x3C) and `>` (0x3E) are the bytes that
/// become 0x3E with bit 1 set, `"` (0x22) and `&` (0x26) those that become 0x26 with
/// bit 2 set.
#[inline(always)]
fn specials(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    zero_in((word | (ONES * 0x02)) ^ (ONES * b'>' as u64)) | zero_in((word | (ONES * 0x04)) ^ (ONES * b'&' as u64))
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

/// An integer that renders in decimal.
pub(crate) trait Decimal: itoa::Integer + Copy {
    /// The value, when it is in `0..10_000`.
    fn small(self) -> Option<u32>;
}

/// Appends an integer's decimal form. Numbers below 10,000 (most numbers on a page)
/// are written digit by digit, inline; a `memcpy` call for a few digits costs more
/// than the copy.
#[inline(always)]
pub(crate) fn push_integer<T: Decimal>(n: T, buf: &mut String) {
    match n.small() {
        Some(n) => push_small(n, buf),
        None => push_large(n, buf),
    }
}

/// "00" to "99", for writing two digits at once.
const PAIRS: &str = "00010203040506070809101112131415161718192021222324252627282930313233343536373839\
                     40414243444546474849505152535455565758596061626364656667686970717273747576777879\
                     8081828384858687888990919293949596979899";

#[inline(always)]
fn pair(n: u32) -> &'static str {
    let at = 2 * (n as usize % 100);
    &PAIRS[at..at + 2]
}

#[inline(always)]
fn push_small(n: u32, buf: &mut String) {
    if n < 10 {
        buf.push_str(&pair(n)[1..]);
    } else if n < 100 {
        buf.push_str(pair(n));
    } else if n < 1000 {
        buf.push_str(&pair(n / 100)[1..]);
        buf.push_str(pair(n));
    } else {
        buf.push_str(pair(n / 100));
        buf.push_str(pair(n));
    }
}

#[inline(never)]
fn push_large<T: itoa::Integer>(n: T, buf: &mut String) {
    buf.push_str(itoa::Buffer::new().format(n));
}

macro_rules! integers {
    ($($t:ty)*) => {$(
        impl Decimal for $t {
            #[inline(always)]
            fn small(self) -> Option<u32> {
                u32::try_from(self).ok().filter(|&n| n < 10_000)
            }
        }
        impl Render for $t {
            #[inline(always)]
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
    fn three_digit_numbers_render_their_hundreds() {
        // Regression: `push_small` took the tens for the hundreds (200 as "000").
        for n in (0u32..=10_000).chain([65_535, 1_000_000]) {
            let mut buf = String::new();
            n.render_to(&mut buf);
            assert_eq!(buf, n.to_string());
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
