//! Escaping: text and attribute values, written or spliced, cannot break out of
//! their element or attribute; raw markup only through `PreEscaped`.

use kiln_html::{Asset, ExternalUrl, PreEscaped, html};

const HOSTILE: &str = "</script><script>alert(\"x\" & 'y')</script>";
const ESCAPED: &str = "&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot; &amp; 'y')&lt;/script&gt;";

#[test]
fn spliced_text_is_escaped() {
    assert_eq!(html! { p { (HOSTILE) } }.as_str(), format!("<p>{ESCAPED}</p>"));
    assert_eq!(html! { p { (HOSTILE.to_owned()) } }.as_str(), format!("<p>{ESCAPED}</p>"));
    assert_eq!(html! { p { (format_args!("{HOSTILE}")) } }.as_str(), format!("<p>{ESCAPED}</p>"));
    assert_eq!(html! { p { ('<') } }.as_str(), "<p>&lt;</p>");
}

#[test]
fn literal_text_is_escaped_at_compile_time_like_spliced_text() {
    let written = html! { p { "</script><script>alert(\"x\" & 'y')</script>" } };
    assert_eq!(written.as_str(), format!("<p>{ESCAPED}</p>"));
}

#[test]
fn script_end_tag_in_text_stays_text() {
    let page = html! { div { (HOSTILE) } };
    assert!(!page.as_str().contains("</script>"), "{page}");
}

#[test]
fn attribute_values_are_escaped() {
    let page = html! { p title=(HOSTILE) data-note="a\"b<c>&" { "x" } };
    assert_eq!(page.as_str(), format!("<p title=\"{ESCAPED}\" data-note=\"a&quot;b&lt;c&gt;&amp;\">x</p>"));
    let class = "\"><script>";
    assert_eq!(html! { p class=(class) { } }.as_str(), "<p class=\"&quot;&gt;&lt;script&gt;\"></p>");
    let maybe: Option<&str> = Some("\"");
    assert_eq!(html! { p title=[maybe] { } }.as_str(), "<p title=\"&quot;\"></p>");
}

#[test]
fn links_are_escaped_in_their_attribute() {
    let page = html! { a href=(ExternalUrl("https://example.org/?a=1&b=\"2\"")) { "x" } };
    assert_eq!(page.as_str(), "<a href=\"https://example.org/?a=1&amp;b=&quot;2&quot;\">x</a>");
    let img = html! { img src=(Asset::new("/a&b.png")) alt="<>"; };
    assert_eq!(img.as_str(), "<img src=\"/a&amp;b.png\" alt=\"&lt;&gt;\">");
}

#[test]
fn pre_escaped_is_the_one_way_to_write_raw_markup() {
    assert_eq!(html! { div { (PreEscaped("<b>bold</b>")) } }.as_str(), "<div><b>bold</b></div>");
    assert_eq!(html! { script { (PreEscaped("if (a < b) {}")) } }.as_str(), "<script>if (a < b) {}</script>");
}

/// What escaping must give, one character at a time.
fn escaped_by_hand(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
        out
    })
}

#[test]
fn long_text_with_specials_at_every_offset_is_escaped() {
    // The scan reads eight bytes at a time: put each special character at every
    // position of a word, and a multi-byte character across word boundaries.
    for special in ['&', '<', '>', '"'] {
        for at in 0..17 {
            let mut text: String = "abcdéfghijklmnopq".chars().take(at).collect();
            text.push(special);
            text.push_str("ü tail");
            assert_eq!(html! { (text) }.as_str(), escaped_by_hand(&text), "{text:?}");
        }
    }
}

#[test]
fn every_ascii_character_at_every_offset_is_escaped_exactly_when_special() {
    // The scan tests a word for the four characters two at a time (`<`/`>` and
    // `"`/`&` differ by one bit): their neighbours (`=`, `?`, `$`, `'`, `.`) and the
    // bytes after a special one in the same word must come through untouched.
    for byte in 1..128u8 {
        for at in 0..17 {
            let mut text = "x".repeat(at);
            text.push(byte as char);
            text.push_str("<=>?\"$&'.");
            text.push(byte as char);
            assert_eq!(html! { (text) }.as_str(), escaped_by_hand(&text), "{text:?}");
        }
    }
}

#[test]
fn specials_in_the_overlapping_last_word_are_escaped_once_each() {
    // The last word is read ending at the text's end, overlapping bytes already
    // scanned (and escaped): put two special characters, or one and a neighbour,
    // at every pair of positions of every text length up to three words.
    let bytes = [b'&', b'<', b'>', b'"', b'=', b'$'];
    for len in 1..=24 {
        for p in 0..len {
            for q in p..len {
                for a in bytes {
                    for b in bytes {
                        let mut text = vec![b'y'; len];
                        text[p] = a;
                        text[q] = b;
                        let text = String::from_utf8(text).expect("ASCII");
                        assert_eq!(html! { (text) }.as_str(), escaped_by_hand(&text), "{text:?}");
                    }
                }
            }
        }
    }
}
