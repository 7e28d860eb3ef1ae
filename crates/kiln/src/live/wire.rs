//! JSON text as the wire format writes it, straight into the message's buffer: no
//! `serde_json::Value` is built per message, and each string is escaped as it is copied.

use std::fmt::Write;

/// Appends `text` as a JSON string: quoted, with `"`, `\` and control characters
/// escaped (RFC 8259 §7); everything else, non-ASCII too, as is.
pub(crate) fn string(out: &mut String, text: &str) {
    out.push('"');
    let bytes = text.as_bytes();
    let mut clean = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        // `clean..i` holds no byte below 0x80 that needs escaping, so it ends on a
        // character boundary (the byte at `i` is ASCII).
        out.push_str(&text[clean..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        clean = i + 1;
    }
    out.push_str(&text[clean..]);
    out.push('"');
}

/// Appends a slot's index as an object key: `"12":`.
pub(crate) fn index_key(out: &mut String, index: usize) {
    if index < 10 {
        out.push('"');
        out.push(char::from(b'0' + index as u8));
        out.push_str("\":");
    } else {
        let _ = write!(out, "\"{index}\":");
    }
}

/// Appends a fingerprint as the wire names it: 16 hex digits, quoted.
pub(crate) fn fingerprint(out: &mut String, fingerprint: u64) {
    let _ = write!(out, "\"{fingerprint:016x}\"");
}

#[cfg(test)]
mod tests {
    use super::string;

    #[test]
    fn strings_are_escaped_as_json_reads_them_back() {
        for text in ["", "plain", "a \"quote\" and \\", "line\nbreak\ttab\r", "\u{1}\u{1f}", "héllo ✓ <b>&amp;</b>"]
        {
            let mut out = String::new();
            string(&mut out, text);
            assert_eq!(serde_json::from_str::<String>(&out).unwrap(), text, "{out}");
        }
    }
}
