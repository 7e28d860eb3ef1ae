//! Checks every database test runs against both backends.

// Each test binary uses only some of these.
#![allow(dead_code)]

use std::future::Future;
use std::time::Duration;

use kiln::db::{FORTUNES, MAX_ROWS, WORLD_ROWS, WorkerDb, World};

/// Runs `f` on a current-thread runtime inside a `LocalSet`, as a kiln worker does.
pub(crate) fn on_worker<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    tokio::task::LocalSet::new().block_on(&rt, f)
}

fn assert_world(w: &World) {
    assert!((1..=WORLD_ROWS).contains(&w.id), "id out of range: {w:?}");
    assert!((1..=WORLD_ROWS).contains(&w.random_number), "random number out of range: {w:?}");
}

pub(crate) async fn reads(db: &WorkerDb) {
    assert_world(&db.random_world().await.expect("random_world"));
    for (asked, got) in
        [(0, 1), (1, 1), (20, 20), (MAX_ROWS, MAX_ROWS), (MAX_ROWS + 1, MAX_ROWS), (usize::MAX, MAX_ROWS)]
    {
        let worlds = db.worlds(asked).await.expect("worlds");
        assert_eq!(worlds.len(), got, "worlds({asked})");
        worlds.iter().for_each(assert_world);
    }
    let by_id = db.worlds_by_id(vec![1, WORLD_ROWS, 1]).await.expect("worlds_by_id");
    assert_eq!(by_id.iter().map(|w| w.id).collect::<Vec<_>>(), [1, WORLD_ROWS, 1]);
    assert!(db.worlds_by_id(vec![WORLD_ROWS + 1]).await.is_err(), "a missing row is an error");
}

pub(crate) async fn fortunes(db: &WorkerDb) {
    let mut fortunes = db.fortunes().await.expect("fortunes");
    fortunes.sort_by_key(|f| f.id);
    let got: Vec<(i32, &str)> = fortunes.iter().map(|f| (f.id, f.message.as_str())).collect();
    assert_eq!(got, FORTUNES, "the twelve fortunes, byte for byte");
}

pub(crate) async fn updates(db: &WorkerDb) {
    for n in [1, 20, MAX_ROWS] {
        let updated = db.update_worlds(n).await.expect("update_worlds");
        assert_eq!(updated.len(), n);
        updated.iter().for_each(assert_world);
        let mut ids: Vec<i32> = updated.iter().map(|w| w.id).collect();
        let stored = db.worlds_by_id(ids.clone()).await.expect("read back");
        assert_eq!(stored, updated, "updates of {n} rows persisted");
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "distinct ids");
    }
    assert_eq!(db.update_worlds(0).await.expect("update 0").len(), 1);
}

pub(crate) async fn cached(db: &WorkerDb) {
    for (asked, got) in [(0, 1), (7, 7), (MAX_ROWS + 3, MAX_ROWS)] {
        let worlds = db.cached_worlds(asked).await.expect("cached_worlds");
        assert_eq!(worlds.len(), got);
        worlds.iter().for_each(assert_world);
    }
}

pub(crate) async fn mix(db: &WorkerDb) {
    let long: Vec<bool> = (0..10).map(|_| db.mix_is_long(5)).collect();
    assert_eq!(long.iter().filter(|&&l| l).count(), 2, "every 5th of 10");
    assert!(long[4] && long[9]);
    assert_eq!(db.mix(false).await.expect("mix short").len(), 1);
    let rows = db.mix(true).await.expect("mix long");
    assert_eq!(rows.len(), 2);
    rows.iter().for_each(assert_world);
    assert_eq!(db.mix_blocking(false).expect("blocking short").len(), 1);
    assert_eq!(db.mix_blocking(true).expect("blocking long").len(), 2);
}

/// Polls `f` until it returns `Some`, at most until `deadline` passes.
pub(crate) async fn poll_until<T, F, Fut>(deadline: Duration, mut f: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let end = tokio::time::Instant::now() + deadline;
    while tokio::time::Instant::now() < end {
        if let Some(v) = f().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}
