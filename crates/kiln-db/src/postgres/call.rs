//! A call's answers as the driver gathers them, and the calls and row buffers a
//! connection keeps for its next queries.
//!
//! Without them every query allocates a call and a buffer for its rows, and frees
//! both once its rows are read: two allocations and two frees per query, on the
//! path of every page that reads the database. Kept, a connection under load reuses
//! the same few dozen, still in cache.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::Waker;

use super::rows::Rows;
use super::statement::Column;
use crate::error::Error;

/// Calls and row buffers kept at most, each: about as many as one batch of a busy
/// worker has out.
const KEPT: usize = 64;
/// A row buffer larger than this is freed rather than kept, so that one large
/// result does not stay allocated for the life of the connection.
const KEPT_ROWS_MAX: usize = 16 * 1024;

/// What a statement being prepared was described as.
#[derive(Debug, Default)]
pub(crate) struct Description {
    pub(crate) params: Vec<u32>,
    pub(crate) columns: Vec<Column>,
}

/// One call's answers.
#[derive(Default)]
pub(super) struct Call {
    pub(super) rows: RefCell<Rows>,
    /// Rows changed, from the command tags.
    pub(super) affected: Cell<u64>,
    /// The last command tag was `ROLLBACK` (the server's answer to the `COMMIT` of a
    /// failed transaction). Only this is kept of the tags: copying each statement's
    /// tag would cost an allocation per query.
    pub(super) rollback: Cell<bool>,
    pub(super) description: RefCell<Description>,
    pub(super) done: Cell<bool>,
    pub(super) error: RefCell<Option<Error>>,
    /// Rolled back because another call's statement failed.
    pub(super) rolled_back: Cell<bool>,
    pub(super) waker: RefCell<Option<Waker>>,
}

impl Call {
    pub(super) fn finish(&self) {
        self.done.set(true);
        if let Some(waker) = self.waker.borrow_mut().take() {
            waker.wake();
        }
    }

    pub(super) fn fail(&self, error: Error) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(error);
        }
    }

    /// Back to what a new call is, keeping its row buffer's allocation.
    fn reset(&self) {
        self.rows.borrow_mut().clear();
        self.affected.set(0);
        self.rollback.set(false);
        *self.description.borrow_mut() = Description::default();
        self.done.set(false);
        *self.error.borrow_mut() = None;
        self.rolled_back.set(false);
        *self.waker.borrow_mut() = None;
    }
}

/// Calls and row buffers kept for a connection's next queries.
#[derive(Default)]
pub(super) struct Kept {
    calls: Vec<Rc<Call>>,
    rows: Vec<Rows>,
}

impl Kept {
    /// A call as new: a kept one if there is one, with a kept row buffer.
    pub(super) fn call(&mut self) -> Rc<Call> {
        let call = self.calls.pop().unwrap_or_default();
        let mut rows = call.rows.borrow_mut();
        if rows.capacity() == 0
            && let Some(kept) = self.rows.pop()
        {
            *rows = kept;
        }
        drop(rows);
        call
    }

    /// Keeps a finished call, unless something still holds it (a statement or `Sync`
    /// not yet answered, which a call that timed out leaves behind).
    pub(super) fn keep_call(&mut self, call: Rc<Call>) {
        if Rc::strong_count(&call) == 1 && self.calls.len() < KEPT {
            call.reset();
            self.calls.push(call);
        }
    }

    /// Keeps a row buffer whose rows have been read.
    pub(super) fn keep_rows(&mut self, mut rows: Rows) {
        if rows.capacity() > 0 && rows.capacity() <= KEPT_ROWS_MAX && self.rows.len() < KEPT {
            rows.clear();
            self.rows.push(rows);
        }
    }

    /// Row buffers kept now.
    #[cfg(test)]
    pub(super) fn rows_kept(&self) -> usize {
        self.rows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used_call() -> Rc<Call> {
        let call = Rc::new(Call::default());
        call.rows.borrow_mut().push(&[0, 0, 0, 1, 7]);
        call.affected.set(3);
        call.rollback.set(true);
        call.description.borrow_mut().params = vec![23];
        call.fail(Error::NotFound);
        call.rolled_back.set(true);
        *call.waker.borrow_mut() = Some(Waker::noop().clone());
        call.finish();
        call
    }

    #[test]
    fn a_kept_call_comes_back_as_new_with_its_row_buffer() {
        let mut kept = Kept::default();
        let call = used_call();
        let buffer = call.rows.borrow().capacity();
        kept.keep_call(call);
        let again = kept.call();
        assert_eq!(again.rows.borrow().len(), 0);
        assert_eq!(again.rows.borrow().capacity(), buffer, "the allocation is kept");
        assert_eq!((again.affected.get(), again.rollback.get(), again.done.get()), (0, false, false));
        assert!(again.description.borrow().params.is_empty());
        assert!(again.error.borrow().is_none());
        assert!(!again.rolled_back.get());
        assert!(again.waker.borrow().is_none());
    }

    #[test]
    fn a_call_something_still_holds_is_not_kept() {
        let mut kept = Kept::default();
        let call = used_call();
        let held = Rc::clone(&call);
        kept.keep_call(call);
        assert!(!Rc::ptr_eq(&kept.call(), &held), "a call still owed an answer was handed out again");
        assert!(held.done.get(), "and it was not reset under its holder");
    }

    #[test]
    fn a_new_call_takes_a_kept_row_buffer_and_large_or_empty_ones_are_freed() {
        let mut kept = Kept::default();
        let mut small = Rows::default();
        small.push(&[1; 100]);
        let capacity = small.capacity();
        kept.keep_rows(small);
        let mut large = Rows::default();
        large.push(&vec![1; KEPT_ROWS_MAX]);
        kept.keep_rows(large);
        kept.keep_rows(Rows::default());
        assert_eq!(kept.rows_kept(), 1, "only the small buffer is kept");
        let call = kept.call();
        assert_eq!(call.rows.borrow().capacity(), capacity);
        assert_eq!(call.rows.borrow().len(), 0);
        assert_eq!(kept.call().rows.borrow().capacity(), 0, "nothing is left to take");
    }

    #[test]
    fn no_more_than_kept_calls_and_buffers_are_held() {
        let mut kept = Kept::default();
        for _ in 0..KEPT * 2 {
            kept.keep_call(Rc::new(Call::default()));
            let mut rows = Rows::default();
            rows.push(&[1]);
            kept.keep_rows(rows);
        }
        assert_eq!((kept.calls.len(), kept.rows.len()), (KEPT, KEPT));
    }
}
