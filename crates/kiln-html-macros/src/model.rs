//! The HTML Living Standard's content models, for the elements kiln-html knows:
//! what each element is (its categories), what it accepts, and its attributes.

/// An element's content categories, as bits.
pub(crate) const FLOW: u16 = 1;
pub(crate) const PHRASING: u16 = 1 << 1;
pub(crate) const INTERACTIVE: u16 = 1 << 2;
pub(crate) const HEADING: u16 = 1 << 3;
pub(crate) const SECTIONING: u16 = 1 << 4;
pub(crate) const METADATA: u16 = 1 << 5;

/// What an element accepts as children (§4 "Content model" of each element).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Model {
    /// No children: a void element.
    Void,
    Flow,
    Phrasing,
    /// The parent's model (`<a>`).
    Transparent,
    /// Text only, escaped (`<title>`, `<option>`, `<textarea>`).
    Text,
    /// Text only, not escaped (`<script>`, `<style>`).
    RawText,
    /// `<head>` then `<body>`.
    Html,
    /// Metadata content, `<title>` exactly once.
    Head,
    /// `<li>` only.
    List,
    /// `<caption>`, `<colgroup>`, `<thead>`, `<tbody>` or `<tr>`, `<tfoot>`, in order.
    Table,
    /// `<tr>` only.
    TableRows,
    /// `<td>` and `<th>` only.
    Row,
    /// `<col>` only.
    Colgroup,
    /// `<option>`, `<optgroup>`, `<hr>`.
    Select,
    /// `<option>` only.
    Options,
    /// Groups of `<dt>`s then `<dd>`s, or `<div>`s holding such groups.
    Dl,
    /// `<summary>` first, then flow content.
    Details,
    /// Flow content with one `<figcaption>`, first or last.
    Figure,
    /// An optional `<legend>` first, then flow content.
    Fieldset,
}

impl Model {
    /// What the model accepts, for messages: "`<x>` accepts …".
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Model::Void => "no children (it is a void element)",
            Model::Flow => "flow content",
            Model::Phrasing => "phrasing content",
            Model::Transparent => "what its parent accepts",
            Model::Text => "text only",
            Model::RawText => "raw text only: a string literal or `PreEscaped(..)`",
            Model::Html => "`<head>` then `<body>`",
            Model::Head => {
                "metadata content: `<title>` (exactly once), `<base>`, `<meta>`, `<link>`, `<style>`, `<script>`"
            }
            Model::List => "only `<li>`",
            Model::Table => "`<caption>`, `<colgroup>`, `<thead>`, `<tbody>` or `<tr>`, `<tfoot>`, in that order",
            Model::TableRows => "only `<tr>`",
            Model::Row => "only `<td>` and `<th>`",
            Model::Colgroup => "only `<col>`",
            Model::Select => "only `<option>`, `<optgroup>` and `<hr>`",
            Model::Options => "only `<option>`",
            Model::Dl => "groups of `<dt>` followed by `<dd>` (or `<div>`s holding such groups)",
            Model::Details => "one `<summary>` first, then flow content",
            Model::Figure => "flow content and one `<figcaption>`, first or last",
            Model::Fieldset => "an optional `<legend>` first, then flow content",
        }
    }

    /// Whether text (literal or spliced) is accepted.
    pub(crate) fn takes_text(self) -> bool {
        matches!(
            self,
            Model::Flow
                | Model::Phrasing
                | Model::Transparent
                | Model::Text
                | Model::Details
                | Model::Figure
                | Model::Fieldset
        )
    }
}

/// What an attribute's value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    Text,
    /// A typed link: a route, an `Asset`, an `ExternalUrl`.
    Url,
    Bool,
    Integer,
    /// One of the listed keywords; as an expression, of the named type.
    Keyword(&'static str, &'static [&'static str]),
}

pub(crate) struct Attr {
    pub(crate) name: &'static str,
    pub(crate) value: Value,
}

const fn a(name: &'static str, value: Value) -> Attr {
    Attr { name, value }
}

use Value::{Bool, Integer, Text, Url};

const INPUT_TYPES: &[&str] = &[
    "button",
    "checkbox",
    "color",
    "date",
    "datetime-local",
    "email",
    "file",
    "hidden",
    "image",
    "month",
    "number",
    "password",
    "radio",
    "range",
    "reset",
    "search",
    "submit",
    "tel",
    "text",
    "time",
    "url",
    "week",
];
const METHOD: Value = Value::Keyword("FormMethod", &["get", "post", "dialog"]);
const ENCTYPE: Value =
    Value::Keyword("FormEnctype", &["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]);
const CROSSORIGIN: Value = Value::Keyword("CrossOrigin", &["anonymous", "use-credentials"]);
const TRUE_FALSE: Value = Value::Keyword("TrueFalse", &["true", "false"]);

/// The global attributes (§3.2.6), besides `data-*` and `aria-*`.
pub(crate) const GLOBAL: &[Attr] = &[
    a("id", Text),
    a("class", Text),
    a("title", Text),
    a("lang", Text),
    a("dir", Value::Keyword("Dir", &["ltr", "rtl", "auto"])),
    a("hidden", Bool),
    a("tabindex", Integer),
    a("style", Text),
    a("accesskey", Text),
    a("autocapitalize", Text),
    a("autofocus", Bool),
    a("contenteditable", Text),
    a("draggable", TRUE_FALSE),
    a("enterkeyhint", Text),
    a("inert", Bool),
    a("inputmode", Text),
    a("is", Text),
    a("itemid", Text),
    a("itemprop", Text),
    a("itemref", Text),
    a("itemscope", Bool),
    a("itemtype", Text),
    a("nonce", Text),
    a("popover", Text),
    a("role", Text),
    a("slot", Text),
    a("spellcheck", TRUE_FALSE),
    a("translate", Value::Keyword("YesNo", &["yes", "no"])),
];

pub(crate) struct Element {
    pub(crate) name: &'static str,
    pub(crate) kinds: u16,
    pub(crate) model: Model,
    pub(crate) attrs: &'static [Attr],
    pub(crate) required: &'static [&'static str],
    /// For an element that is neither flow nor phrasing content: where it may be.
    pub(crate) only_in: Option<&'static str>,
}

const fn el(name: &'static str, kinds: u16, model: Model) -> Element {
    Element { name, kinds, model, attrs: &[], required: &[], only_in: None }
}

const fn with(mut e: Element, attrs: &'static [Attr]) -> Element {
    e.attrs = attrs;
    e
}

const fn only_in(mut e: Element, parents: &'static str) -> Element {
    e.only_in = Some(parents);
    e
}

const fn required(mut e: Element, names: &'static [&'static str]) -> Element {
    e.required = names;
    e
}

const F: u16 = FLOW;
const FP: u16 = FLOW | PHRASING;
const FPI: u16 = FLOW | PHRASING | INTERACTIVE;
const CELL: &[Attr] = &[a("colspan", Integer), a("rowspan", Integer), a("headers", Text)];

use Model::*;

/// Every element kiln-html knows, §4.1 to §4.11 of the standard.
pub(crate) const ELEMENTS: &[Element] = &[
    // §4.1 The document element, §4.2 document metadata.
    required(only_in(el("html", 0, Html), "a fragment's top level (it makes a `Document`)"), &["lang"]),
    only_in(el("head", 0, Head), "`<html>`, first"),
    only_in(el("title", METADATA, Model::Text), "`<head>`"),
    only_in(with(el("base", METADATA, Void), &[a("href", Url), a("target", Text)]), "`<head>`"),
    required(
        only_in(
            with(
                el("link", METADATA, Void),
                &[
                    a("rel", Text),
                    a("href", Url),
                    a("type", Text),
                    a("media", Text),
                    a("sizes", Text),
                    a("hreflang", Text),
                    a("as", Text),
                    a("integrity", Text),
                    a("crossorigin", CROSSORIGIN),
                    a("referrerpolicy", Text),
                ],
            ),
            "`<head>`",
        ),
        &["rel", "href"],
    ),
    only_in(
        with(
            el("meta", METADATA, Void),
            &[a("name", Text), a("content", Text), a("charset", Text), a("http-equiv", Text), a("media", Text)],
        ),
        "`<head>`",
    ),
    only_in(with(el("style", METADATA, RawText), &[a("media", Text)]), "`<head>`"),
    with(
        el("script", METADATA | FP, RawText),
        &[
            a("src", Url),
            a("type", Text),
            a("async", Bool),
            a("defer", Bool),
            a("nomodule", Bool),
            a("integrity", Text),
            a("crossorigin", CROSSORIGIN),
            a("referrerpolicy", Text),
        ],
    ),
    // §4.3 Sections.
    only_in(el("body", 0, Flow), "`<html>`, after `<head>`"),
    el("article", F | SECTIONING, Flow),
    el("section", F | SECTIONING, Flow),
    el("nav", F | SECTIONING, Flow),
    el("aside", F | SECTIONING, Flow),
    el("h1", F | HEADING, Phrasing),
    el("h2", F | HEADING, Phrasing),
    el("h3", F | HEADING, Phrasing),
    el("h4", F | HEADING, Phrasing),
    el("h5", F | HEADING, Phrasing),
    el("h6", F | HEADING, Phrasing),
    el("header", F, Flow),
    el("footer", F, Flow),
    el("address", F, Flow),
    // §4.4 Grouping content.
    el("p", F, Phrasing),
    el("hr", F, Void),
    el("pre", F, Phrasing),
    with(el("blockquote", F, Flow), &[a("cite", Url)]),
    with(
        el("ol", F, List),
        &[a("reversed", Bool), a("start", Integer), a("type", Value::Keyword("ListStyle", &["1", "a", "A", "i", "I"]))],
    ),
    el("ul", F, List),
    el("menu", F, List),
    only_in(with(el("li", 0, Flow), &[a("value", Integer)]), "`<ul>`, `<ol>`, `<menu>`"),
    el("dl", F, Dl),
    only_in(el("dt", 0, Flow), "`<dl>`"),
    only_in(el("dd", 0, Flow), "`<dl>`"),
    el("figure", F, Figure),
    only_in(el("figcaption", 0, Flow), "`<figure>`, first or last"),
    el("main", F, Flow),
    el("div", F, Flow),
    // §4.5 Text-level semantics.
    with(
        el("a", FPI, Transparent),
        &[
            a("href", Url),
            a("target", Text),
            a("download", Text),
            a("rel", Text),
            a("hreflang", Text),
            a("type", Text),
            a("referrerpolicy", Text),
        ],
    ),
    el("em", FP, Phrasing),
    el("strong", FP, Phrasing),
    el("small", FP, Phrasing),
    el("s", FP, Phrasing),
    el("cite", FP, Phrasing),
    with(el("q", FP, Phrasing), &[a("cite", Url)]),
    el("dfn", FP, Phrasing),
    el("abbr", FP, Phrasing),
    with(el("data", FP, Phrasing), &[a("value", Text)]),
    with(el("time", FP, Phrasing), &[a("datetime", Text)]),
    el("code", FP, Phrasing),
    el("var", FP, Phrasing),
    el("samp", FP, Phrasing),
    el("kbd", FP, Phrasing),
    el("sub", FP, Phrasing),
    el("sup", FP, Phrasing),
    el("i", FP, Phrasing),
    el("b", FP, Phrasing),
    el("u", FP, Phrasing),
    el("mark", FP, Phrasing),
    el("bdi", FP, Phrasing),
    el("bdo", FP, Phrasing),
    el("span", FP, Phrasing),
    el("br", FP, Void),
    el("wbr", FP, Void),
    // §4.8 Embedded content.
    required(
        with(
            el("img", FP, Void),
            &[
                a("src", Url),
                a("alt", Text),
                a("srcset", Text),
                a("sizes", Text),
                a("width", Integer),
                a("height", Integer),
                a("loading", Value::Keyword("Loading", &["lazy", "eager"])),
                a("decoding", Value::Keyword("Decoding", &["sync", "async", "auto"])),
                a("crossorigin", CROSSORIGIN),
                a("referrerpolicy", Text),
                a("fetchpriority", Text),
                a("ismap", Bool),
            ],
        ),
        &["src", "alt"],
    ),
    // §4.9 Tabular data.
    el("table", F, Table),
    only_in(el("caption", 0, Flow), "`<table>`, first"),
    only_in(with(el("colgroup", 0, Colgroup), &[a("span", Integer)]), "`<table>`"),
    only_in(with(el("col", 0, Void), &[a("span", Integer)]), "`<colgroup>`"),
    only_in(el("thead", 0, TableRows), "`<table>`"),
    only_in(el("tbody", 0, TableRows), "`<table>`"),
    only_in(el("tfoot", 0, TableRows), "`<table>`"),
    only_in(el("tr", 0, Row), "`<table>`, `<thead>`, `<tbody>`, `<tfoot>`"),
    only_in(with(el("td", 0, Flow), CELL), "`<tr>`"),
    only_in(
        with(
            el("th", 0, Flow),
            &[
                a("colspan", Integer),
                a("rowspan", Integer),
                a("headers", Text),
                a("abbr", Text),
                a("scope", Value::Keyword("Scope", &["row", "col", "rowgroup", "colgroup"])),
            ],
        ),
        "`<tr>`",
    ),
    // §4.10 Forms.
    with(
        el("form", F, Flow),
        &[
            a("action", Url),
            a("method", METHOD),
            a("enctype", ENCTYPE),
            a("name", Text),
            a("target", Text),
            a("novalidate", Bool),
            a("autocomplete", Value::Keyword("AutocompleteForm", &["on", "off"])),
            a("accept-charset", Text),
            a("rel", Text),
        ],
    ),
    with(el("label", FPI, Phrasing), &[a("for", Text)]),
    with(
        el("input", FPI, Void),
        &[
            a("type", Value::Keyword("InputType", INPUT_TYPES)),
            a("name", Text),
            a("value", Text),
            a("placeholder", Text),
            a("required", Bool),
            a("disabled", Bool),
            a("readonly", Bool),
            a("checked", Bool),
            a("multiple", Bool),
            a("min", Text),
            a("max", Text),
            a("step", Text),
            a("minlength", Integer),
            a("maxlength", Integer),
            a("size", Integer),
            a("pattern", Text),
            a("autocomplete", Text),
            a("list", Text),
            a("form", Text),
            a("accept", Text),
            a("alt", Text),
            a("dirname", Text),
            a("formaction", Url),
            a("formmethod", METHOD),
            a("formenctype", ENCTYPE),
            a("formnovalidate", Bool),
            a("formtarget", Text),
        ],
    ),
    with(
        el("button", FPI, Phrasing),
        &[
            a("type", Value::Keyword("ButtonType", &["submit", "reset", "button"])),
            a("name", Text),
            a("value", Text),
            a("disabled", Bool),
            a("form", Text),
            a("formaction", Url),
            a("formmethod", METHOD),
            a("formenctype", ENCTYPE),
            a("formnovalidate", Bool),
            a("formtarget", Text),
            a("popovertarget", Text),
        ],
    ),
    with(
        el("select", FPI, Select),
        &[
            a("name", Text),
            a("disabled", Bool),
            a("required", Bool),
            a("multiple", Bool),
            a("size", Integer),
            a("form", Text),
            a("autocomplete", Text),
        ],
    ),
    el("datalist", FP, Options),
    only_in(with(el("optgroup", 0, Options), &[a("label", Text), a("disabled", Bool)]), "`<select>`"),
    only_in(
        with(
            el("option", 0, Model::Text),
            &[a("value", Text), a("label", Text), a("selected", Bool), a("disabled", Bool)],
        ),
        "`<select>`, `<datalist>`, `<optgroup>`",
    ),
    with(
        el("textarea", FPI, Model::Text),
        &[
            a("name", Text),
            a("rows", Integer),
            a("cols", Integer),
            a("placeholder", Text),
            a("required", Bool),
            a("disabled", Bool),
            a("readonly", Bool),
            a("minlength", Integer),
            a("maxlength", Integer),
            a("wrap", Value::Keyword("Wrap", &["soft", "hard"])),
            a("form", Text),
            a("autocomplete", Text),
            a("dirname", Text),
        ],
    ),
    with(el("output", FP, Phrasing), &[a("for", Text), a("name", Text), a("form", Text)]),
    with(el("progress", FP, Phrasing), &[a("value", Text), a("max", Text)]),
    with(
        el("meter", FP, Phrasing),
        &[a("value", Text), a("min", Text), a("max", Text), a("low", Text), a("high", Text), a("optimum", Text)],
    ),
    with(el("fieldset", F, Fieldset), &[a("disabled", Bool), a("name", Text), a("form", Text)]),
    only_in(el("legend", 0, Phrasing), "`<fieldset>`, first"),
    // §4.11 Interactive elements.
    with(el("details", F | INTERACTIVE, Details), &[a("open", Bool), a("name", Text)]),
    only_in(el("summary", 0, Phrasing), "`<details>`, first"),
    with(el("dialog", F, Flow), &[a("open", Bool)]),
];

pub(crate) fn element(name: &str) -> Option<&'static Element> {
    ELEMENTS.iter().find(|e| e.name == name)
}

/// Elements that may not appear anywhere inside an element (§4, "descendants" in
/// the content models), beside interactive content in `<a>` and `<button>`.
pub(crate) fn forbidden_descendants(name: &str) -> &'static [&'static str] {
    match name {
        "form" => &["form"],
        "label" => &["label"],
        "header" | "footer" => &["header", "footer"],
        "address" => {
            &["header", "footer", "address", "h1", "h2", "h3", "h4", "h5", "h6", "article", "aside", "nav", "section"]
        }
        "th" | "dt" => &["header", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "article", "aside", "nav", "section"],
        "caption" => &["table"],
        "progress" => &["progress"],
        "meter" => &["meter"],
        "dfn" => &["dfn"],
        _ => &[],
    }
}
