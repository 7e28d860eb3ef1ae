//! The elements, as marker types: they name the parent element in the message of a
//! value spliced where it does not belong (`fragment` is a fragment's top level).
#![allow(non_camel_case_types)]

macro_rules! markers {
    ($($name:ident)*) => {$(
        #[doc = concat!("`<", stringify!($name), ">`")]
        #[derive(Debug)]
        pub struct $name;
    )*};
}

markers!(
    fragment html head title base link meta style script body article section nav aside h1 h2 h3 h4 h5 h6 header footer
    address p hr pre blockquote ol ul menu li dl dt dd figure figcaption main div a em strong small s cite q dfn abbr data
    time code var samp kbd sub sup i b u mark bdi bdo span br wbr img table caption colgroup col thead tbody tfoot tr td th
    form label input button select datalist optgroup option textarea output progress meter fieldset legend details summary
    dialog
);
