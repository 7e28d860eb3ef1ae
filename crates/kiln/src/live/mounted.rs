//! A mounted view: its state, its socket's push sources, and what its page was last sent.

use std::task::{Context, Poll};

use crate::live::diff::{Diff, Tracker};
use crate::live::event::{EventError, decode_event};
use crate::live::share;
use crate::live::view::{HandleInfo, LiveSocket, LiveView};

/// A live view as it runs for one page: each event or message changes its state, and
/// gives the [`Diff`] to send (empty when the page already shows the new state).
pub struct Mounted<V: LiveView> {
    view: V,
    tracker: Tracker,
    socket: LiveSocket<V>,
}

impl<V: LiveView> Mounted<V> {
    /// Mounts a view built by [`LiveView::mount`]: the [`Diff`] is the mount message,
    /// every statics with its fingerprint and every slot.
    pub fn new(view: V) -> (Self, Diff) {
        let (tracker, mount) = share::mount::<V>(view.render_key(), || view.render().into_part());
        (Mounted { view, tracker, socket: LiveSocket::new() }, mount)
    }

    /// Mounts a view whose page has connected: [`LiveView::connected`] runs first
    /// (its subscriptions and timers need a Tokio runtime).
    pub fn connect(mut view: V) -> (Self, Diff) {
        let mut socket = LiveSocket::new();
        view.connected(&mut socket);
        let (mut mounted, mount) = Self::new(view);
        mounted.socket = socket;
        (mounted, mount)
    }

    /// The view's state.
    pub fn view(&self) -> &V {
        &self.view
    }

    /// The page as last rendered: statics and slots joined.
    pub fn html(&self) -> String {
        let mut html = String::new();
        kiln_html::Render::render_to(self.tracker.last(), &mut html);
        html
    }

    /// Handles an event and gives what changed.
    pub fn event(&mut self, event: V::Event) -> Diff {
        self.handle(event);
        self.rerender()
    }

    /// Decodes an event as the page sends it (the wire format of [`crate::live`]) and
    /// handles it; an event the view cannot take changes nothing.
    pub fn client_event(&mut self, message: &[u8]) -> Result<Diff, EventError> {
        let event = decode_event(message)?;
        Ok(self.event(event))
    }

    /// Handles a message the server pushed (a bus message, a timer's tick).
    pub fn info<M>(&mut self, message: M) -> Diff
    where
        V: HandleInfo<M>,
    {
        self.view.handle_info(message, &mut self.socket);
        self.rerender()
    }

    /// Waits for the next message of the view's push sources (its subscriptions,
    /// timers and spawned work), handles it and gives what changed. Pending forever
    /// while the view has no source.
    pub async fn push(&mut self) -> Diff {
        std::future::poll_fn(|cx| self.poll_push(cx)).await;
        self.rerender()
    }

    /// Changes the state directly (as a subscription might) and gives what changed.
    pub fn update(&mut self, change: impl FnOnce(&mut V)) -> Diff {
        change(&mut self.view);
        self.rerender()
    }

    /// Handles an event without rendering: the socket coalesces changes while its page
    /// is slow to read.
    pub(crate) fn handle(&mut self, event: V::Event) {
        self.view.handle(event, &mut self.socket);
    }

    /// Hands the view the next message of its push sources, without rendering.
    pub(crate) fn poll_push(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.socket.poll_deliver(cx, &mut self.view)
    }

    /// Runs [`LiveView::disconnected`] once the page has gone: the open page's
    /// subscriptions and timers go with it; gives the socket of the work the hook started.
    pub(crate) fn disconnect(&mut self) -> LiveSocket<V> {
        self.socket = LiveSocket::new();
        self.view.disconnected(&mut self.socket);
        std::mem::replace(&mut self.socket, LiveSocket::new())
    }

    /// Hands the view the next message of `work` (what [`Mounted::disconnect`] gave).
    pub(crate) fn poll_leaving(&mut self, work: &mut LiveSocket<V>, cx: &mut Context<'_>) -> Poll<()> {
        work.poll_deliver(cx, &mut self.view)
    }

    /// Renders the view and gives what changed since the page was last sent: shared
    /// with the other views of its type in the same state when it has a
    /// [`LiveView::render_key`].
    pub(crate) fn rerender(&mut self) -> Diff {
        let view = &self.view;
        share::update::<V>(&mut self.tracker, view.render_key(), || view.render().into_part())
    }
}
