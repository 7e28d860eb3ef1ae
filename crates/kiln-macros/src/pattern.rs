//! Route patterns: `/writings/{page}`, `/files/{*rest}`, checked at compile time.

/// One piece of a pattern.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Literal text, with `{{` and `}}` already unescaped.
    Literal(String),
    /// `{name}`: one path segment.
    Capture(String),
    /// `{*name}`: the rest of the path, slashes included.
    Wildcard(String),
}

/// Splits a pattern into pieces, or says what is wrong with it.
pub(crate) fn parse(pattern: &str) -> Result<Vec<Piece>, String> {
    if !pattern.starts_with('/') {
        return Err(format!("malformed route pattern `{pattern}`: it must start with `/`"));
    }
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut chars = pattern.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|&(_, c)| c) == Some('{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek().map(|&(_, c)| c) == Some('}') => {
                chars.next();
                literal.push('}');
            }
            '}' => return Err(format!("malformed route pattern `{pattern}`: `}}` at byte {at} closes nothing")),
            '{' => {
                let rest = &pattern[at + 1..];
                let Some(end) = rest.find('}') else {
                    return Err(format!("malformed route pattern `{pattern}`: `{{` at byte {at} is never closed"));
                };
                let inner = &rest[..end];
                for _ in 0..inner.chars().count() + 1 {
                    chars.next();
                }
                if let Some(last) = pieces.last() {
                    if matches!(last, Piece::Capture(_) | Piece::Wildcard(_)) && literal.is_empty() {
                        return Err(format!("malformed route pattern `{pattern}`: two captures must not touch"));
                    }
                }
                if !literal.is_empty() {
                    pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                }
                let (wildcard, name) = match inner.strip_prefix('*') {
                    Some(name) => (true, name),
                    None => (false, inner),
                };
                if !is_ident(name) {
                    return Err(format!(
                        "malformed route pattern `{pattern}`: `{{{inner}}}` must name a field (a Rust identifier)"
                    ));
                }
                if pieces.iter().any(|p| matches!(p, Piece::Capture(n) | Piece::Wildcard(n) if n == name)) {
                    return Err(format!("malformed route pattern `{pattern}`: `{name}` is captured twice"));
                }
                pieces.push(if wildcard { Piece::Wildcard(name.to_owned()) } else { Piece::Capture(name.to_owned()) });
            }
            '?' | '#' => {
                return Err(format!(
                    "malformed route pattern `{pattern}`: `{c}` has no place in a path (query parameters are fields)"
                ));
            }
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    let wildcard_at = pieces.iter().position(|p| matches!(p, Piece::Wildcard(_)));
    if let Some(at) = wildcard_at {
        if at + 1 != pieces.len() {
            return Err(format!("malformed route pattern `{pattern}`: a wildcard `{{*..}}` must end the pattern"));
        }
    }
    Ok(pieces)
}

fn is_ident(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_captures_wildcards_and_escapes() {
        assert_eq!(
            parse("/a/{x}/b{{c}}/{*rest}").unwrap(),
            vec![
                Piece::Literal("/a/".into()),
                Piece::Capture("x".into()),
                Piece::Literal("/b{c}/".into()),
                Piece::Wildcard("rest".into()),
            ]
        );
    }

    #[test]
    fn refuses_malformed_patterns() {
        let cases = [
            ("a/b", "must start with `/`"),
            ("/a/{x", "never closed"),
            ("/a/x}", "closes nothing"),
            ("/a/{}", "must name a field"),
            ("/a/{1x}", "must name a field"),
            ("/{*rest}/x", "must end the pattern"),
            ("/{x}/{x}", "captured twice"),
            ("/{x}{y}", "must not touch"),
            ("/a?b=1", "has no place in a path"),
        ];
        for (pattern, message) in cases {
            let err = parse(pattern).unwrap_err();
            assert!(err.contains(message), "{pattern}: {err}");
        }
    }
}
