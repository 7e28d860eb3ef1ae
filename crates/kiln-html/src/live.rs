//! A live view's rendering, as `live_html!` builds it: the static parts of its markup,
//! fixed at compile time and named by a fingerprint, and the slots between them,
//! evaluated at each rendering. Joined, they are the page `html!` renders for the same
//! markup, byte for byte; kept, they let kiln send only the slots that changed.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::render::Render;

/// The static parts of one block of markup (the whole view, a branch of an `@if` or
/// `@match`, the body of a `@for`), one more than its slots, and their fingerprint.
#[derive(Debug)]
pub struct Statics {
    parts: &'static [&'static str],
    fingerprint: u64,
}

impl Statics {
    /// The statics of a block with no markup: an `@if` without `@else` that is false.
    pub const EMPTY: Statics = Statics::new(&[""]);

    /// Statics and their fingerprint, computed at compile time where `live_html!` puts
    /// them (in a `static`).
    pub const fn new(parts: &'static [&'static str]) -> Self {
        Statics { parts, fingerprint: fingerprint(parts) }
    }

    /// The static markup, in order: slot `i` goes between `parts()[i]` and `parts()[i + 1]`.
    pub fn parts(&self) -> &'static [&'static str] {
        self.parts
    }

    /// A hash of the parts (FNV-1a, 64 bits): the same in every build of the same markup.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// FNV-1a over the parts, each ended by a byte UTF-8 never holds, so that `["ab", ""]`
/// and `["a", "b"]` differ.
const fn fingerprint(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < parts.len() {
        let bytes = parts[i].as_bytes();
        let mut j = 0;
        while j <= bytes.len() {
            let byte = if j < bytes.len() { bytes[j] } else { 0xff };
            hash ^= byte as u64;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
            j += 1;
        }
        i += 1;
    }
    hash
}

/// What one slot rendered to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// Markup or an attribute's value, escaped, as one string.
    Text(String),
    /// The branch an `@if` or `@match` took: its own statics and slots.
    Part(Part),
    /// What a `@for` rendered: its body's statics once, the slots of each item.
    List(List),
}

/// A block rendered: its statics and what each of its slots rendered to.
#[derive(Debug, Clone)]
pub struct Part {
    statics: &'static Statics,
    slots: Vec<Slot>,
}

impl Part {
    /// The part of a block: `slots` has one fewer entry than `statics`.
    pub fn new(statics: &'static Statics, slots: Vec<Slot>) -> Self {
        debug_assert_eq!(statics.parts.len(), slots.len() + 1, "a slot between each two statics");
        Part { statics, slots }
    }

    /// The part of a block with no markup.
    pub fn empty() -> Self {
        static EMPTY: Statics = Statics::EMPTY;
        Part { statics: &EMPTY, slots: Vec::new() }
    }

    /// The block's statics.
    pub fn statics(&self) -> &'static Statics {
        self.statics
    }

    /// What each slot rendered to, in order.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }
}

impl PartialEq for Part {
    fn eq(&self, other: &Self) -> bool {
        self.statics.fingerprint == other.statics.fingerprint && self.slots == other.slots
    }
}

impl Eq for Part {}

/// A `@for` rendered: the statics of its body and each item's slots.
#[derive(Debug, Clone)]
pub struct List {
    statics: &'static Statics,
    items: Vec<Item>,
}

impl List {
    /// The items a loop rendered with its body's statics.
    pub fn new(statics: &'static Statics, items: Vec<Item>) -> Self {
        List { statics, items }
    }

    /// The statics of the loop's body, shared by its items.
    pub fn statics(&self) -> &'static Statics {
        self.statics
    }

    /// The items, in order.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// Whether every item has a key (the loop was written `@for x in xs; key = ..`).
    pub fn is_keyed(&self) -> bool {
        self.items.iter().all(|item| item.key.is_some())
    }
}

impl PartialEq for List {
    fn eq(&self, other: &Self) -> bool {
        self.statics.fingerprint == other.statics.fingerprint && self.items == other.items
    }
}

impl Eq for List {}

/// One iteration of a `@for`: its key, if the loop names one, and its slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    key: Option<String>,
    slots: Vec<Slot>,
}

impl Item {
    /// An item with its key and slots.
    pub fn new(key: Option<String>, slots: Vec<Slot>) -> Self {
        Item { key, slots }
    }

    /// The key the loop gave this item.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// What each slot of the body rendered to.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }
}

fn render_slots(statics: &Statics, slots: &[Slot], buf: &mut String) {
    let mut parts = statics.parts.iter();
    if let Some(first) = parts.next() {
        buf.push_str(first);
    }
    for (slot, part) in slots.iter().zip(parts) {
        slot.render_to(buf);
        buf.push_str(part);
    }
}

impl Render for Slot {
    fn render_to(&self, buf: &mut String) {
        match self {
            Slot::Text(text) => buf.push_str(text),
            Slot::Part(part) => part.render_to(buf),
            Slot::List(list) => list.render_to(buf),
        }
    }
}

impl Render for Part {
    fn render_to(&self, buf: &mut String) {
        render_slots(self.statics, &self.slots, buf);
    }
}

impl Render for List {
    fn render_to(&self, buf: &mut String) {
        for item in &self.items {
            render_slots(self.statics, &item.slots, buf);
        }
    }
}

/// A live view's markup rendered by `live_html!`, whose events are of type `E`.
///
/// Its HTML ([`Live::to_html`]) is what `html!` renders for the same markup; its
/// [`Part`] is what kiln keeps to send only what changes. A rendering made under
/// [`Live::direct`] holds its HTML only.
pub struct Live<E> {
    rendering: Rendering,
    events: PhantomData<fn() -> E>,
}

/// What a [`Live`] holds.
enum Rendering {
    /// Statics and slots.
    Split(Part),
    /// The HTML, written as `html!` writes it, from `start` on (before it: the
    /// prefix [`Live::direct_after`] was given), and the root's statics (their
    /// fingerprint names the view's container).
    Html { statics: &'static Statics, html: String, start: usize },
}

thread_local! {
    /// Set by [`Live::direct`] until the next `live_html!` takes it: the string to write
    /// the HTML after.
    static DIRECT: Cell<Option<String>> = const { Cell::new(None) };
}

impl<E> Live<E> {
    /// What `live_html!` builds: `render` gets the marker that ties the events its
    /// markup names to `E`, which the caller's expected type fixes first, and a string
    /// to write the HTML into under [`Live::direct`] (then it returns no part; it sizes
    /// the string as `html!` does).
    #[doc(hidden)]
    pub fn __build(
        statics: &'static Statics,
        render: impl FnOnce(&Events<E>, Option<&mut String>) -> Option<Part>,
    ) -> Self {
        let events = Events(PhantomData);
        let rendering = if let Some(mut html) = DIRECT.take() {
            let start = html.len();
            render(&events, Some(&mut html));
            Rendering::Html { statics, html, start }
        } else {
            Rendering::Split(render(&events, None).expect("`live_html!` builds a part unless written directly"))
        };
        Live { rendering, events: PhantomData }
    }

    /// The rendering `render` returns (a view's `render`), its markup written straight
    /// into a string as `html!` writes it: what a page's first answer needs, without
    /// the statics and slots the socket diffs (a string per slot, built, joined and
    /// dropped). The first `live_html!` that runs inside `render` renders so.
    ///
    /// [`part`](Live::part) of that rendering panics; its HTML, its
    /// [`fingerprint`](Live::fingerprint) and [`Render`] are the same either way.
    pub fn direct(render: impl FnOnce() -> Self) -> Self {
        render_directly(String::new(), render)
    }

    /// `prefix`, then the HTML of the rendering `render` returns, written straight
    /// after it as under [`Live::direct`] (one string, no copy of the view's HTML: the
    /// container a page's first answer puts the view in); and the rendering's
    /// [`fingerprint`](Live::fingerprint).
    pub fn direct_after(prefix: &str, render: impl FnOnce() -> Self) -> (String, u64) {
        let live = render_directly(String::from(prefix), render);
        let fingerprint = live.fingerprint();
        let html = match live.rendering {
            Rendering::Html { html, start, .. } if start == prefix.len() => html,
            // Not the rendering that took the prefix (one `render` built before it did):
            // its HTML is written after the prefix again.
            rendering => {
                let mut html = String::from(prefix);
                Live::<E> { rendering, events: PhantomData }.render_to(&mut html);
                html
            }
        };
        (html, fingerprint)
    }

    /// The rendering as statics and slots.
    ///
    /// # Panics
    ///
    /// For a rendering made under [`Live::direct`], which holds its HTML only.
    pub fn part(&self) -> &Part {
        match &self.rendering {
            Rendering::Split(part) => part,
            Rendering::Html { .. } => panic!("{DIRECT_HAS_NO_PART}"),
        }
    }

    /// The rendering as statics and slots, owned.
    ///
    /// # Panics
    ///
    /// For a rendering made under [`Live::direct`], which holds its HTML only.
    pub fn into_part(self) -> Part {
        match self.rendering {
            Rendering::Split(part) => part,
            Rendering::Html { .. } => panic!("{DIRECT_HAS_NO_PART}"),
        }
    }

    /// The fingerprint of the markup's top-level statics, which names the view's
    /// container.
    pub fn fingerprint(&self) -> u64 {
        match &self.rendering {
            Rendering::Split(part) => part.statics().fingerprint(),
            Rendering::Html { statics, .. } => statics.fingerprint(),
        }
    }

    /// The whole HTML: statics and slots joined.
    pub fn to_html(&self) -> String {
        match &self.rendering {
            Rendering::Split(part) => {
                let mut html = String::new();
                part.render_to(&mut html);
                html
            }
            Rendering::Html { html, start, .. } => html[*start..].to_owned(),
        }
    }

    /// The whole HTML, owned: no copy of a rendering made under [`Live::direct`].
    pub fn into_html(self) -> String {
        match self.rendering {
            Rendering::Split(_) => self.to_html(),
            Rendering::Html { mut html, start, .. } => {
                html.drain(..start);
                html
            }
        }
    }
}

/// Renders `render` with the first `live_html!` in it written after `prefix`, and
/// leaves no rendering after it to do so, however `render` ends.
fn render_directly<E>(prefix: String, render: impl FnOnce() -> Live<E>) -> Live<E> {
    struct Unset;
    impl Drop for Unset {
        fn drop(&mut self) {
            DIRECT.set(None);
        }
    }
    DIRECT.set(Some(prefix));
    let _unset = Unset;
    render()
}

/// Why [`Live::part`] panics.
const DIRECT_HAS_NO_PART: &str =
    "a `Live` rendered under `Live::direct` holds its HTML only, not its statics and slots";

impl<E> Render for Live<E> {
    fn render_to(&self, buf: &mut String) {
        match &self.rendering {
            Rendering::Split(part) => part.render_to(buf),
            Rendering::Html { html, start, .. } => buf.push_str(&html[*start..]),
        }
    }
}

impl<E> std::fmt::Debug for Live<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.rendering {
            Rendering::Split(part) => f.debug_tuple("Live").field(part).finish(),
            Rendering::Html { html, start, .. } => f.debug_tuple("Live").field(&&html[*start..]).finish(),
        }
    }
}

/// The event type of the markup being expanded: every `on:event` in it is checked
/// against `E`, and `E` is the `Live<E>` the macro returns.
#[doc(hidden)]
pub struct Events<E>(PhantomData<fn() -> E>);

/// A list item's key, as a string.
#[doc(hidden)]
pub fn key<K: std::fmt::Display + ?Sized>(key: &K) -> String {
    key.to_string()
}
