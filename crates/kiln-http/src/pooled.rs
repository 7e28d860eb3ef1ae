//! Per-request futures in memory the worker reuses.
//!
//! A connection's task lives as long as the connection, and its future is as large as
//! the largest state it may ever be in: answering a request (the service's future, a
//! body read, a file sent) is kilobytes, waiting for the next request a few hundred
//! bytes. So the request's part is boxed, and only while a request is answered does the
//! connection hold it: ten thousand idle keep-alive connections, or quiet event-stream
//! subscribers whose request has been answered, do not each carry a service's future.
//!
//! The box comes from a per-worker free list, not from `malloc`: a request then costs a
//! pop and a push instead of an allocation of some kilobytes, and the blocks, all of the
//! one size, stay out of the heap's small free chunks. Were they freed to `malloc`, a
//! burst of subscribers would interleave them with small long-lived objects (a
//! subscription, a timer): each freed block is carved up for those, the next request's
//! block comes from fresh memory, and the holes stay resident (issue 23: a quiet SSE
//! subscriber cost 3.6 KB of RSS for 1.7 KB of heap).

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::RefCell;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};

/// Free blocks kept per size; beyond this, a finished future's block goes back to the
/// allocator. Requests answered at once on one worker rarely number more.
const KEEP: usize = 256;

/// A worker's free blocks, by layout: one layout per kind of future boxed here (the
/// HTTP/1.1 request over plain TCP, over TLS), so the lists are few and short to search.
#[derive(Default)]
pub(crate) struct Blocks {
    free: RefCell<Vec<(Layout, Vec<NonNull<u8>>)>>,
}

impl Blocks {
    /// Moves `future` into a block of this pool.
    pub(crate) fn boxed<F: Future>(&self, future: F) -> Pooled<'_, F> {
        let layout = Layout::new::<F>();
        let block = if layout.size() == 0 { NonNull::<F>::dangling().cast() } else { self.take(layout) };
        let ptr = block.cast::<F>();
        // SAFETY: `block` is unused memory of `F`'s layout (from `take`, which allocates
        // with that layout or hands back a block freed by a `Pooled<F>` of the same
        // layout), or a dangling, aligned pointer for a zero-sized `F`.
        unsafe { ptr.as_ptr().write(future) };
        Pooled { ptr, blocks: self, owns: PhantomData }
    }

    fn take(&self, layout: Layout) -> NonNull<u8> {
        let reused = self.free.borrow_mut().iter_mut().find(|(l, _)| *l == layout).and_then(|(_, list)| list.pop());
        reused.unwrap_or_else(|| {
            // SAFETY: `layout` has a non-zero size (checked by the caller).
            let raw = unsafe { alloc(layout) };
            NonNull::new(raw).unwrap_or_else(|| handle_alloc_error(layout))
        })
    }

    fn give_back(&self, layout: Layout, block: NonNull<u8>) {
        let mut free = self.free.borrow_mut();
        let list = match free.iter().position(|(l, _)| *l == layout) {
            Some(at) => &mut free[at].1,
            None => {
                free.push((layout, Vec::new()));
                &mut free.last_mut().expect("just pushed").1
            }
        };
        if list.len() < KEEP {
            list.push(block);
        } else {
            // SAFETY: the block was allocated with `layout` and nothing refers to it.
            unsafe { dealloc(block.as_ptr(), layout) };
        }
    }

    /// Free blocks held now, for the tests.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.free.borrow().iter().map(|(_, list)| list.len()).sum()
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        for (layout, list) in self.free.get_mut().drain(..) {
            for block in list {
                // SAFETY: every listed block was allocated with its list's layout, and
                // nothing refers to it.
                unsafe { dealloc(block.as_ptr(), layout) };
            }
        }
    }
}

/// A future in a block of a worker's [`Blocks`], as `Pin<Box<F>>` is one on the heap:
/// it never moves, and is dropped where it lies; its block then goes back to the list.
pub(crate) struct Pooled<'b, F> {
    ptr: NonNull<F>,
    blocks: &'b Blocks,
    /// Owns an `F` (for the drop check).
    owns: PhantomData<F>,
}

// As `Box<F>`: moving the handle does not move the future.
impl<F> Unpin for Pooled<'_, F> {}

impl<F: Future> Future for Pooled<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `ptr` holds a live `F` until this handle drops, and it is never moved
        // out of its block, so pinning it is sound; `&mut self` makes this the only
        // reference.
        let future = unsafe { Pin::new_unchecked(&mut *self.ptr.as_ptr()) };
        future.poll(cx)
    }
}

impl<F> Drop for Pooled<'_, F> {
    fn drop(&mut self) {
        // SAFETY: `ptr` holds a live `F`, dropped once here; nothing uses it after.
        unsafe { std::ptr::drop_in_place(self.ptr.as_ptr()) };
        let layout = Layout::new::<F>();
        if layout.size() != 0 {
            self.blocks.give_back(layout, self.ptr.cast());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;
    use std::task::Waker;

    /// Counts its drops.
    struct Dropped(Rc<Cell<u32>>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    /// One type of future for both boxes below, as a connection boxes one per request.
    async fn answer(guard: Dropped, byte: u8) -> [u8; 300] {
        let _guard = guard;
        [byte; 300]
    }

    #[test]
    fn a_finished_future_s_block_is_reused_by_the_next_of_its_type() {
        let blocks = Blocks::default();
        let drops = Rc::new(Cell::new(0));
        let mut cx = Context::from_waker(Waker::noop());
        let mut first = blocks.boxed(answer(Dropped(Rc::clone(&drops)), 7));
        let at = first.ptr.cast::<u8>();
        assert_eq!(Pin::new(&mut first).poll(&mut cx), Poll::Ready([7; 300]));
        drop(first);
        assert_eq!(drops.get(), 1);
        assert_eq!(blocks.held(), 1);
        let mut again = blocks.boxed(answer(Dropped(Rc::clone(&drops)), 8));
        assert_eq!(again.ptr.cast::<u8>(), at, "the block was not reused");
        assert_eq!(blocks.held(), 0);
        assert_eq!(Pin::new(&mut again).poll(&mut cx), Poll::Ready([8; 300]));
        drop(again);
        assert_eq!((drops.get(), blocks.held()), (2, 1));
    }

    #[test]
    fn a_future_dropped_before_it_finished_drops_what_it_holds_and_frees_its_block() {
        let blocks = Blocks::default();
        let drops = Rc::new(Cell::new(0));
        let guard = Dropped(Rc::clone(&drops));
        let mut pooled = blocks.boxed(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut pooled).poll(&mut cx).is_pending());
        drop(pooled);
        assert_eq!(drops.get(), 1);
        assert_eq!(blocks.held(), 1);
    }

    #[test]
    fn at_most_keep_blocks_are_kept_and_zero_sized_futures_take_none() {
        let blocks = Blocks::default();
        let many: Vec<_> = (0..KEEP + 10).map(|i| blocks.boxed(async move { i })).collect();
        drop(many);
        assert_eq!(blocks.held(), KEEP);
        drop(blocks.boxed(std::future::pending::<()>()));
        assert_eq!(blocks.held(), KEEP);
    }
}
