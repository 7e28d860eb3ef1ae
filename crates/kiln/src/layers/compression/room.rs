//! Output room for a whole body compressed in one call, kept per worker.
//!
//! The one-call encoders (libdeflate for gzip, C brotli) write into a slice as large as
//! their bound for the body (a little over the body's length: stored blocks at worst),
//! which must be initialised memory; room allocated for each body would be zeroed for
//! each, about 1 % of the wiki page's instructions. So each worker thread keeps room of
//! up to [`MAX_ROOM`] bytes from body to body and copies out only what was written.

use std::cell::RefCell;
use std::io;

/// The largest output room a worker keeps, a page's worth. A larger body gets room of
/// its own.
pub(super) const MAX_ROOM: usize = 256 * 1024;

thread_local! {
    static ROOM: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `compress` on room for `bound` bytes and returns the first `n` bytes it says it
/// wrote, as an exact-size `Vec`. `compress` must not call this again (it does not: the
/// encoders are C calls).
pub(super) fn compress_into(
    bound: usize,
    compress: impl FnOnce(&mut [u8]) -> io::Result<usize>,
) -> io::Result<Vec<u8>> {
    if bound > MAX_ROOM {
        return own_room(bound, compress);
    }
    let mut compress = Some(compress);
    let kept = ROOM.try_with(|room| {
        let mut room = room.try_borrow_mut().ok()?;
        if room.len() < bound {
            room.resize(bound, 0);
        }
        let compress = compress.take()?;
        Some(compress(&mut room[..bound]).and_then(|len| written(&room[..bound], len).map(<[u8]>::to_vec)))
    });
    match kept.ok().flatten() {
        Some(out) => out,
        // A thread being torn down (or the room in use): room for this body alone.
        None => own_room(bound, compress.expect("not taken: the room was not lent")),
    }
}

fn own_room(bound: usize, compress: impl FnOnce(&mut [u8]) -> io::Result<usize>) -> io::Result<Vec<u8>> {
    let mut out = vec![0; bound];
    let len = compress(&mut out)?;
    written(&out, len)?;
    out.truncate(len);
    // What compression saved goes back rather than being held while the response is sent.
    out.shrink_to_fit();
    Ok(out)
}

/// The first `len` bytes of `room`, or an error if an encoder claims more than it had.
fn written(room: &[u8], len: usize) -> io::Result<&[u8]> {
    room.get(..len).ok_or_else(|| io::Error::other("encoder wrote past its room"))
}

#[cfg(test)]
pub(super) fn kept_len() -> usize {
    ROOM.with(|room| room.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(byte: u8, len: usize) -> impl FnOnce(&mut [u8]) -> io::Result<usize> {
        move |room: &mut [u8]| {
            room[..len].fill(byte);
            Ok(len)
        }
    }

    #[test]
    fn the_room_kept_is_bounded_and_reused() {
        assert_eq!(compress_into(1000, fill(1, 600)).unwrap(), vec![1; 600]);
        let kept = kept_len();
        assert!((1000..=MAX_ROOM).contains(&kept), "{kept}");
        // A body past the bound gets room of its own; the kept room is unchanged.
        assert_eq!(compress_into(MAX_ROOM + 1, fill(2, MAX_ROOM)).unwrap(), vec![2; MAX_ROOM]);
        assert_eq!(kept_len(), kept);
        // Reused room: only what was written this time comes out.
        assert_eq!(compress_into(10, fill(3, 4)).unwrap(), vec![3; 4]);
    }

    #[test]
    fn an_encoder_that_claims_too_much_is_an_error() {
        assert!(compress_into(10, |_| Ok(11)).is_err());
        assert!(compress_into(MAX_ROOM + 10, |_| Ok(MAX_ROOM + 11)).is_err());
        assert!(compress_into(10, |_| Err(io::Error::other("no"))).is_err());
    }
}
