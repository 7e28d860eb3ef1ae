//! Typed attribute values: text, numbers, and the keywords the standard fixes.

use std::borrow::Cow;
use std::fmt;

use crate::render::{Render, push_integer};

/// A value for a text attribute (`class`, `id`, `title`, `name`, `value` …), escaped.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an attribute value",
    label = "not text",
    note = "attribute values are strings, numbers or `char`s"
)]
pub trait AttrValue: Render {}

impl<T: AttrValue + ?Sized> AttrValue for &T {}

macro_rules! text_values {
    ($($t:ty),*) => {$( impl AttrValue for $t {} )*};
}

text_values!(str, String, Cow<'_, str>, Box<str>, char, fmt::Arguments<'_>, f32, f64);
text_values!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// A value for an integer attribute (`colspan`, `rowspan`, `tabindex`, `maxlength`,
/// `width` …).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer: this attribute takes a number",
    label = "not an integer"
)]
pub trait Number {
    /// Appends the decimal form.
    fn write_number(&self, buf: &mut String);
}

impl<T: Number + ?Sized> Number for &T {
    fn write_number(&self, buf: &mut String) {
        (**self).write_number(buf);
    }
}

macro_rules! numbers {
    ($($t:ty)*) => {$(
        impl Number for $t {
            #[inline]
            fn write_number(&self, buf: &mut String) {
                push_integer(*self, buf);
            }
        }
    )*};
}

numbers!(u8 u16 u32 u64 usize i8 i16 i32 i64 isize);

/// An attribute whose value is one of the keywords the standard lists.
pub trait Keyword: Copy {
    /// The keyword as written in HTML.
    fn as_str(self) -> &'static str;
}

macro_rules! keywords {
    ($($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal,)* })*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "`")]
                $variant,
            )*
        }
        impl Keyword for $name {
            fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
        }
    )*};
}

keywords! {
    /// `type` of `<input>`.
    InputType {
        Button => "button", Checkbox => "checkbox", Color => "color", Date => "date",
        DatetimeLocal => "datetime-local", Email => "email", File => "file", Hidden => "hidden",
        Image => "image", Month => "month", Number => "number", Password => "password",
        Radio => "radio", Range => "range", Reset => "reset", Search => "search",
        Submit => "submit", Tel => "tel", Text => "text", Time => "time", Url => "url",
        Week => "week",
    }
    /// `method` of `<form>`, `formmethod` of `<button>` and `<input>`.
    FormMethod { Get => "get", Post => "post", Dialog => "dialog", }
    /// `enctype` of `<form>`, `formenctype` of `<button>` and `<input>`.
    FormEnctype {
        UrlEncoded => "application/x-www-form-urlencoded",
        Multipart => "multipart/form-data",
        Plain => "text/plain",
    }
    /// `type` of `<button>`.
    ButtonType { Submit => "submit", Reset => "reset", Button => "button", }
    /// `dir`, a global attribute.
    Dir { Ltr => "ltr", Rtl => "rtl", Auto => "auto", }
    /// `scope` of `<th>`.
    Scope { Row => "row", Col => "col", RowGroup => "rowgroup", ColGroup => "colgroup", }
    /// `loading` of `<img>`.
    Loading { Lazy => "lazy", Eager => "eager", }
    /// `decoding` of `<img>`.
    Decoding { Sync => "sync", Async => "async", Auto => "auto", }
    /// `crossorigin` of `<img>`, `<link>` and `<script>`.
    CrossOrigin { Anonymous => "anonymous", UseCredentials => "use-credentials", }
    /// `wrap` of `<textarea>`.
    Wrap { Soft => "soft", Hard => "hard", }
    /// `type` of `<ol>`.
    ListStyle { Decimal => "1", LowerAlpha => "a", UpperAlpha => "A", LowerRoman => "i", UpperRoman => "I", }
    /// `autocomplete` of `<form>`.
    AutocompleteForm { On => "on", Off => "off", }
    /// `draggable`, `spellcheck`, `contenteditable`: the enumerated `true`/`false`.
    TrueFalse { True => "true", False => "false", }
    /// `translate`, a global attribute.
    YesNo { Yes => "yes", No => "no", }
}
