//! Rendering once per distinct state: when one message reaches many views of one page
//! on a worker, the views in the same state share one rendering, one diff and one
//! message text. A view opts in with [`LiveView::render_key`]; equal keys promise equal
//! renderings, so the first view to go from key `a` to key `b` renders and diffs, and
//! every other view of its type going from `a` to `b` on this worker takes the same
//! rendering (kept once, shared: also less memory per view) and the same text.
//!
//! A shared message is taken only by a page that holds exactly the statics the first
//! one held (which statics a message carries depends on what its page was sent
//! before); any other page renders its own, as a view without a key always does.

use std::any::TypeId;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use kiln_html::Part;

use crate::live::diff::{Diff, StaticsLog, Tracker};

/// Most renderings a worker keeps; past it the cache starts again (a message reaches
/// its views within one pass of the worker, so only the latest few matter).
const KEPT: usize = 256;

/// A view type, the key its page was last sent (`None`: the mount) and the key it renders under now.
type Transition = (TypeId, Option<u64>, u64);

/// What the first view of a transition made, for the others.
struct Shared {
    part: Rc<Part>,
    diff: Diff,
    log: StaticsLog,
}

/// The worker's shared renderings, by transition (hashed with foldhash: the keys are
/// the views' own, and SipHash cost more than the rest of a shared delivery).
type Renderings = HashMap<Transition, Rc<Shared>, foldhash::fast::RandomState>;

thread_local! {
    static SHARED: RefCell<Renderings> = RefCell::new(Renderings::default());
}

fn shared(transition: &Transition) -> Option<Rc<Shared>> {
    SHARED.with(|shared| shared.borrow().get(transition).cloned())
}

fn keep(transition: Transition, part: &Rc<Part>, diff: &Diff, log: StaticsLog) {
    SHARED.with(|shared| {
        let mut shared = shared.borrow_mut();
        if shared.len() >= KEPT {
            shared.clear();
        }
        shared.insert(transition, Rc::new(Shared { part: Rc::clone(part), diff: diff.clone(), log }));
    });
}

/// The mount of a view of type `T` whose state has `key`: the tracker and the mount
/// message, rendered by `render` unless another view of `T` mounted in that state.
pub(crate) fn mount<T: 'static>(key: Option<u64>, render: impl FnOnce() -> Part) -> (Tracker, Diff) {
    let Some(key) = key else {
        let (tracker, diff, _) = Tracker::mount_shared(Rc::new(render()), None);
        return (tracker, diff);
    };
    let transition = (TypeId::of::<T>(), None, key);
    if let Some(shared) = shared(&transition) {
        if let Some(tracker) = Tracker::mount_following(&shared.part, Some(key), &shared.log) {
            return (tracker, shared.diff.clone());
        }
    }
    let part = Rc::new(render());
    let (tracker, diff, log) = Tracker::mount_shared(Rc::clone(&part), Some(key));
    keep(transition, &part, &diff, log);
    (tracker, diff)
}

/// What changed for a view of type `T` whose state now has `key`, rendered by `render`
/// unless another view of `T` made the same change.
pub(crate) fn update<T: 'static>(tracker: &mut Tracker, key: Option<u64>, render: impl FnOnce() -> Part) -> Diff {
    let (Some(old), Some(new)) = (tracker.key(), key) else {
        return tracker.update_shared(Rc::new(render()), key).0;
    };
    if old == new {
        // Equal keys render the same: nothing changed on the page.
        return Diff::default();
    }
    let transition = (TypeId::of::<T>(), Some(old), new);
    if let Some(shared) = shared(&transition) {
        if tracker.follow(&shared.part, key, &shared.log) {
            return shared.diff.clone();
        }
    }
    let part = Rc::new(render());
    let (diff, log) = tracker.update_shared(Rc::clone(&part), key);
    keep(transition, &part, &diff, log);
    diff
}
