//! Driving a live view in process, without a browser: mount it, send events and
//! server messages, and assert on the page and on the diffs it was sent.

use crate::live::diff::Diff;
use crate::live::event::EventError;
use crate::live::mounted::Mounted;
use crate::live::replica::Replica;
use crate::live::view::{HandleInfo, LiveView};

/// A mounted view and the page it drives, kept in step through the wire format alone:
/// after every message the page's copy (rebuilt from the mount message and the diffs)
/// must render what the server renders, or the call panics saying where they differ.
///
/// See [`LiveView`] for an example.
pub struct LiveTest<V: LiveView> {
    mounted: Mounted<V>,
    mount: Diff,
    sent: Vec<Diff>,
    page: Replica,
}

impl<V: LiveView> LiveTest<V> {
    /// Mounts the view (as built by its `mount`, or by the test), as the first HTTP
    /// answer does: [`LiveView::connected`] does not run, so the view has no
    /// subscriptions or timers, but the work its events start runs ([`push`](Self::push)).
    pub fn new(view: V) -> Self {
        Self::mounted(Mounted::new(view))
    }

    /// Mounts the view as its socket does: [`LiveView::connected`] runs first, so its
    /// subscriptions and timers deliver through [`push`](Self::push). Timers need a
    /// Tokio runtime.
    pub fn connect(view: V) -> Self {
        Self::mounted(Mounted::connect(view))
    }

    fn mounted((mounted, mount): (Mounted<V>, Diff)) -> Self {
        let mut test = LiveTest { mounted, mount: mount.clone(), sent: Vec::new(), page: Replica::default() };
        test.apply(&mount);
        test
    }

    /// The mount message: every statics with its fingerprint, and every slot.
    pub fn mount_message(&self) -> &Diff {
        &self.mount
    }

    /// The page's HTML now.
    pub fn html(&self) -> String {
        self.mounted.html()
    }

    /// The view's state.
    pub fn view(&self) -> &V {
        self.mounted.view()
    }

    /// Sends an event, as a click on an element that names it would.
    pub fn event(&mut self, event: V::Event) -> Diff {
        let diff = self.mounted.event(event);
        self.deliver(&diff);
        diff
    }

    /// Sends a message as the page sends it: `{"event": ..}` or
    /// `{"event": "Variant", "form": "a=1"}` (the wire format of [`crate::live`]).
    pub fn client_event(&mut self, message: &str) -> Result<Diff, EventError> {
        let diff = self.mounted.client_event(message.as_bytes())?;
        self.deliver(&diff);
        Ok(diff)
    }

    /// Submits a form to the variant `on:submit` names, its fields URL-encoded.
    pub fn submit(&mut self, variant: &str, form: &str) -> Result<Diff, EventError> {
        let message = serde_json::json!({ "event": variant, "form": form }).to_string();
        self.client_event(&message)
    }

    /// Delivers a message the server pushes (a bus message, a timer's tick).
    pub fn info<M>(&mut self, message: M) -> Diff
    where
        V: HandleInfo<M>,
    {
        let diff = self.mounted.info(message);
        self.deliver(&diff);
        diff
    }

    /// Waits for the next message the server pushes to the view (the result of work an
    /// event spawned, a bus message, a timer's tick), delivers it and gives the diff
    /// sent. Pending forever while the view has nothing running: a test puts a
    /// timeout around it.
    pub async fn push(&mut self) -> Diff {
        let diff = self.mounted.push().await;
        self.deliver(&diff);
        diff
    }

    /// The diffs sent since the mount, in order (empty ones are never sent).
    pub fn sent(&self) -> &[Diff] {
        &self.sent
    }

    fn deliver(&mut self, diff: &Diff) {
        if !diff.is_empty() {
            self.sent.push(diff.clone());
        }
        self.apply(diff);
    }

    /// Applies a message to the page's copy, which must then match the server's page.
    fn apply(&mut self, diff: &Diff) {
        let Some(message) = diff.as_str() else { return };
        if let Err(broken) = self.page.apply(message) {
            panic!("the page cannot apply {message}: {broken}");
        }
        let page = self.page.html().unwrap_or_else(|broken| panic!("the page cannot render: {broken}"));
        assert_eq!(page, self.mounted.html(), "the page's copy differs from the server's after {message}");
    }
}
