//! What the API reads and answers: serde types whose schemas (schemars, through
//! kiln's re-export) are the document's `components.schemas`.

use kiln::openapi::JsonSchema;
use serde::{Deserialize, Serialize};

use super::super::input::has_control_chars;
use super::super::model;
use super::super::page_view::{MAX_AUTHOR, MAX_COMMENT};

/// What a name or a comment may hold, as a JSON Schema pattern (ECMA-262, read the same
/// by Python's `re` and Rust's `regex`): no control character but the tab and line
/// breaks, and one character at least that is neither one nor white space.
/// [`is_text`] is the same rule in Rust; the two are kept side by side so that what
/// the document allows is what the handler takes.
const TEXT_PATTERN: &str = concat!(
    r"^[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]*",
    r"[^\x00-\x20\x7F-\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]",
    r"[^\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]*$"
);

/// Whether `text` is `1..=max` characters that [`TEXT_PATTERN`] matches.
pub(crate) fn is_text(text: &str, max: usize) -> bool {
    (1..=max).contains(&text.chars().count()) && !has_control_chars(text) && !text.trim().is_empty()
}

/// A page as listed: no text.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct PageSummary {
    /// The page's address: `/pages/{slug}`.
    pub(crate) slug: String,
    /// The page's title.
    pub(crate) title: String,
    /// When the page was made, in Unix seconds.
    pub(crate) created: i64,
    /// When the page was last edited, in Unix seconds.
    pub(crate) updated: i64,
}

/// One page of the list of pages.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct PageList {
    /// The pages, newest first.
    pub(crate) pages: Vec<PageSummary>,
    /// The next page of the list, when there is one.
    pub(crate) next_page: Option<u32>,
}

/// A whole page.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct Page {
    /// The page's address: `/pages/{slug}`.
    pub(crate) slug: String,
    /// The page's title.
    pub(crate) title: String,
    /// The page's text, in Markdown.
    pub(crate) markdown: String,
    /// When the page was made, in Unix seconds.
    pub(crate) created: i64,
    /// When the page was last edited, in Unix seconds.
    pub(crate) updated: i64,
}

/// A comment on a page, shown as text.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct Comment {
    /// The comment's number, unique across pages; `#c{id}` on the page.
    pub(crate) id: i64,
    /// Who wrote it.
    pub(crate) author: String,
    /// What they wrote.
    pub(crate) body: String,
    /// When it was posted, in Unix seconds.
    pub(crate) created: i64,
}

/// A comment to post: the author is the bearer token's.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct NewComment {
    /// The comment: at most 4,000 characters and 3 links (`http://`, `https://`,
    /// `www.`); more links are a `422`.
    #[schemars(length(min = 1, max = MAX_COMMENT), pattern(TEXT_PATTERN))]
    pub(crate) body: String,
}

/// A comment to post from the site's pages: the author is named.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct NamedComment {
    /// The commenter's name, at most 80 characters.
    #[schemars(length(min = 1, max = MAX_AUTHOR), pattern(TEXT_PATTERN))]
    pub(crate) author: String,
    /// The comment: at most 4,000 characters and 3 links (`http://`, `https://`,
    /// `www.`); more links are a `422`.
    #[schemars(length(min = 1, max = MAX_COMMENT), pattern(TEXT_PATTERN))]
    pub(crate) body: String,
}

/// A token asked for by the editor, who logs in with the site's password: the name the
/// token's comments are posted under (a script's, a bot's), and the password.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct TokenRequest {
    /// The commenter's name, at most 80 characters.
    #[schemars(length(min = 1, max = MAX_AUTHOR), pattern(TEXT_PATTERN))]
    pub(crate) author: String,
    /// The editor's password, as on the site's login page.
    #[schemars(length(min = 1, max = MAX_PASSWORD))]
    pub(crate) password: String,
}

/// The longest password a token request may carry: Argon2 takes any length, but a
/// request need not make it hash megabytes.
pub(crate) const MAX_PASSWORD: usize = 1024;

/// A bearer token: send it as `Authorization: Bearer {token}`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kiln::openapi::schemars")]
pub(crate) struct Token {
    /// The token, signed with the site's key.
    pub(crate) token: String,
    /// How many seconds it lasts.
    pub(crate) expires_in: u64,
}

impl From<model::PageEntry> for PageSummary {
    fn from(entry: model::PageEntry) -> Self {
        PageSummary { slug: entry.slug, title: entry.title, created: entry.created, updated: entry.updated }
    }
}

impl From<model::Page> for Page {
    fn from(page: model::Page) -> Self {
        Page { slug: page.slug, title: page.title, markdown: page.body, created: page.created, updated: page.updated }
    }
}

impl From<model::Comment> for Comment {
    fn from(c: model::Comment) -> Self {
        Comment { id: c.id, author: c.author, body: c.body, created: c.created }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_rule_takes_what_the_form_takes_untrimmed() {
        let table = [
            ("Ada", true),
            (" Ada\t\r\n", true),
            ("", false),
            (" \u{a0}\u{3000}\n", false),
            ("a\u{0}", false),
            ("a\u{85}", false),
            ("日本", true),
        ];
        for (text, ok) in table {
            assert_eq!(is_text(text, MAX_AUTHOR), ok, "{text:?}");
        }
        assert!(!is_text(&"n".repeat(MAX_AUTHOR + 1), MAX_AUTHOR));
    }
}
