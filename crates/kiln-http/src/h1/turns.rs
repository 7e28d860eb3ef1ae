//! Turns for pipelined work: a connection whose client pipelined more requests than
//! one turn answers waits here for its next turn, so that the worker's other
//! connections are not queued behind every pipeliner's backlog.
//!
//! Yielding alone (`tokio::task::yield_now`) puts a pipeliner at the back of the run
//! queue, but with a hundred pipeliners there, a new request waits for a hundred
//! turns (issue 33: 200 clients pipelining `/bigtable` without reading kept a
//! bystander waiting 2.2 s). Here the waiting pipeliners are called one at a time: the
//! one called yields once (the worker reads its sockets and accepts meanwhile), then
//! calls the next as its turn begins. However many pipeline, a request that arrives
//! meanwhile waits for about two turns, not one per pipeliner. A call is never held
//! across a wait for the socket (it is passed on as the turn begins), so a pipeliner
//! whose client stopped reading delays nobody.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// The connections waiting for their next turn, in order, and which one was called.
#[derive(Default)]
pub(crate) struct Turns {
    waiting: RefCell<VecDeque<(u64, Waker)>>,
    /// The ticket of the connection called whose turn has not begun, if any.
    called: Cell<Option<u64>>,
    next_ticket: Cell<u64>,
}

impl Turns {
    /// Waits until this connection's next turn (see the module's documentation).
    pub(crate) async fn next(&self) {
        Called { turns: self, ticket: None }.await;
        // Passed on however this ends: as the turn begins, or if the connection is
        // dropped during the yield.
        let _pass = Pass(self);
        tokio::task::yield_now().await;
    }

    /// Calls the first waiting connection, if none is called already.
    fn call_next(&self) {
        if self.called.get().is_some() {
            return;
        }
        let front = self.waiting.borrow_mut().pop_front();
        if let Some((ticket, waker)) = front {
            self.called.set(Some(ticket));
            waker.wake();
        }
    }
}

/// Passes the call on when dropped.
struct Pass<'a>(&'a Turns);

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        self.0.called.set(None);
        self.0.call_next();
    }
}

/// The wait in the queue until called; dropped while waiting (its connection closed),
/// it leaves the queue, or passes on a call it had.
struct Called<'a> {
    turns: &'a Turns,
    ticket: Option<u64>,
}

impl Future for Called<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let turns = self.turns;
        let Some(ticket) = self.ticket else {
            let ticket = turns.next_ticket.get();
            turns.next_ticket.set(ticket.wrapping_add(1));
            self.ticket = Some(ticket);
            turns.waiting.borrow_mut().push_back((ticket, cx.waker().clone()));
            // Alone, this is called at once.
            turns.call_next();
            return Poll::Pending;
        };
        if turns.called.get() == Some(ticket) {
            self.ticket = None;
            return Poll::Ready(());
        }
        let mut waiting = turns.waiting.borrow_mut();
        if let Some((_, waker)) = waiting.iter_mut().find(|(t, _)| *t == ticket) {
            waker.clone_from(cx.waker());
        }
        Poll::Pending
    }
}

impl Drop for Called<'_> {
    fn drop(&mut self) {
        let Some(ticket) = self.ticket else { return };
        if self.turns.called.get() == Some(ticket) {
            self.turns.called.set(None);
            self.turns.call_next();
        } else {
            self.turns.waiting.borrow_mut().retain(|(t, _)| *t != ticket);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    #[tokio::test]
    async fn waiting_pipeliners_are_called_one_at_a_time_behind_other_work() {
        // Three pipeliners take turns; a bystander becomes ready during the first turn.
        // It runs before a second pipeliner's turn is over, not after every pipeliner's
        // (with `yield_now` in place of the turns: a, b, c, bystander).
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let turns = Rc::new(Turns::default());
                let order = Rc::new(RefCell::new(Vec::new()));
                let mut tasks = Vec::new();
                for name in ["a", "b", "c"] {
                    let (turns, order) = (Rc::clone(&turns), Rc::clone(&order));
                    tasks.push(tokio::task::spawn_local(async move {
                        for turn in 0..3 {
                            turns.next().await;
                            order.borrow_mut().push(name);
                            if name == "a" && turn == 0 {
                                let order = Rc::clone(&order);
                                tokio::task::spawn_local(async move { order.borrow_mut().push("bystander") });
                            }
                        }
                    }));
                }
                for task in tasks {
                    task.await.unwrap();
                }
                let order = order.borrow();
                let at = order.iter().position(|&name| name == "bystander").unwrap();
                assert!(at <= 2, "the bystander waited for every pipeliner: {order:?}");
                assert_eq!(order.len(), 10);
            })
            .await;
    }

    #[tokio::test]
    async fn a_called_wait_that_is_dropped_passes_its_call_on() {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let turns = Rc::new(Turns::default());
                let first = tokio::task::spawn_local({
                    let turns = Rc::clone(&turns);
                    async move { turns.next().await }
                });
                let second = tokio::task::spawn_local({
                    let turns = Rc::clone(&turns);
                    async move { turns.next().await }
                });
                tokio::task::yield_now().await;
                // The first was called; aborted before it runs, its call goes to the second.
                first.abort();
                tokio::time::timeout(std::time::Duration::from_secs(5), second).await.unwrap().unwrap();
                assert!(turns.waiting.borrow().is_empty());
                assert_eq!(turns.called.get(), None);
            })
            .await;
    }
}
