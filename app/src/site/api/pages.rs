//! Reading the wiki: the list of pages, a page, a search.

use std::num::NonZeroU32;

use kiln::{Json, State};

use super::super::model;
use super::super::pages::PAGE_SIZE;
use super::routes::{ApiPage, ApiPages, ApiSearch};
use super::types::{Page, PageList, PageSummary};
use crate::state::Worker;

/// Most pages a search answers.
pub(crate) const SEARCH_LIMIT: i64 = 50;

/// `GET /api/pages`: past the last page the list is empty (page 0 does not parse: `400`).
pub(crate) async fn pages(route: ApiPages, State(worker): State<Worker>) -> Result<Json<PageList>, kiln::db::Error> {
    let number = route.page.map_or(1, NonZeroU32::get);
    let offset = i64::from(number - 1) * i64::from(PAGE_SIZE);
    let (entries, total) = futures_util::future::try_join(
        model::newest(&worker.db, i64::from(PAGE_SIZE), offset),
        model::count(&worker.db),
    )
    .await?;
    let next_page = (offset + i64::from(PAGE_SIZE) < total).then(|| number + 1);
    Ok(Json(PageList { pages: entries.into_iter().map(PageSummary::from).collect(), next_page }))
}

/// `GET /api/pages/{slug}`.
pub(crate) async fn page(route: ApiPage, State(worker): State<Worker>) -> Result<Json<Page>, kiln::db::Error> {
    Ok(Json(model::page(&worker.db, &route.slug).await?.into()))
}

/// `GET /api/search?q=…`: an empty `q` matches every page.
pub(crate) async fn search(
    route: ApiSearch,
    State(worker): State<Worker>,
) -> Result<Json<Vec<PageSummary>>, kiln::db::Error> {
    let found = model::search(&worker.db, &route.q, SEARCH_LIMIT).await?;
    Ok(Json(found.into_iter().map(PageSummary::from).collect()))
}
