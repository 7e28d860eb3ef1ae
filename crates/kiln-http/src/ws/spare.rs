//! Small message buffers reused within a worker: a message received owns its bytes
//! (`Message` holds a `Vec` or a `String`), and once it has been sent its buffer
//! comes back here for the next message received, so that an echo or a relay of
//! small messages allocates nothing per message (an allocation and a free were about
//! a tenth of a 20-byte echo's instructions).
//!
//! Thread-local like the read buffers' pool (a worker is one thread), and bounded
//! both in the size of a buffer kept and in their number: at most
//! [`KEEP_COUNT`] × [`KEEP_BYTES`] per worker, whatever the number of sockets.

use std::cell::RefCell;

/// Buffers with room for more than this are freed, not kept.
const KEEP_BYTES: usize = 4 * 1024;
/// Buffers a worker keeps.
const KEEP_COUNT: usize = 16;

thread_local! {
    /// The worker's spare buffers, empty, each with room for at most `KEEP_BYTES`.
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// An empty buffer with room for `len` bytes: the last one given back if it has the
/// room and not much more (a message the application keeps must not hold a buffer
/// many times its size), else a new one made to size.
pub(crate) fn buffer(len: usize) -> Vec<u8> {
    if len <= KEEP_BYTES {
        let spare = SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            let fits = spare.last().is_some_and(|b| (len..=2 * len + 64).contains(&b.capacity()));
            if fits { spare.pop() } else { None }
        });
        if let Some(buf) = spare {
            return buf;
        }
    }
    Vec::with_capacity(len)
}

/// Takes back a buffer whose bytes are no longer needed (a message now sent).
pub(crate) fn give_back(mut buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > KEEP_BYTES {
        return;
    }
    buf.clear();
    SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        if spare.len() < KEEP_COUNT {
            spare.push(buf);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sent_buffer_is_reused_for_a_message_that_fits_it() {
        std::thread::spawn(|| {
            let first = buffer(20);
            let at = first.as_ptr();
            give_back(first);
            let again = buffer(20);
            assert_eq!(again.as_ptr(), at, "the same allocation again");

            give_back(Vec::with_capacity(1000));
            assert!(buffer(20).capacity() < 1000, "a buffer far larger than the message is not handed out");
            assert_eq!(buffer(900).capacity(), 1000, "but kept for one it fits");

            give_back(Vec::with_capacity(KEEP_BYTES + 1));
            for _ in 0..KEEP_COUNT + 4 {
                give_back(Vec::with_capacity(64));
            }
            SPARE.with(|spare| {
                let spare = spare.borrow();
                assert_eq!(spare.len(), KEEP_COUNT, "bounded in number");
                assert!(spare.iter().all(|b| b.capacity() <= KEEP_BYTES && b.is_empty()), "and in size");
            });
        })
        .join()
        .unwrap();
    }
}
