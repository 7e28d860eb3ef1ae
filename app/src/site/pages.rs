//! Reading the site: the home page's list of pages (a page with its comments is a
//! live view, `live.rs`).

use kiln::markup::{Document, Fragment};
use kiln::{State, html};

use super::errors::SiteError;
use super::layout;
use super::model;
use super::routes::{Home, ShowPage};
use crate::state::Worker;

/// Pages listed per home page.
pub(crate) const PAGE_SIZE: u32 = 10;

/// `/?page=N`: `N` from 1; 0 is a 400 page (so is a value that is not a number, refused
/// by the route itself), a number past the last page a 404 page.
pub(crate) async fn home(route: Home, State(worker): State<Worker>) -> Result<Fragment<Document>, SiteError> {
    let number = route.page.unwrap_or(1);
    if number == 0 {
        return Err(SiteError::bad_request("Pages are numbered from 1."));
    }
    let total = model::count(&worker.db).await?;
    let last = u32::try_from((total.max(1) + i64::from(PAGE_SIZE) - 1) / i64::from(PAGE_SIZE)).unwrap_or(u32::MAX);
    if number > last {
        return Err(SiteError::not_found());
    }
    let offset = i64::from(number - 1) * i64::from(PAGE_SIZE);
    let entries = model::newest(&worker.db, i64::from(PAGE_SIZE), offset).await?;
    let newer = (number > 1).then(|| Home { page: (number > 2).then_some(number - 1) });
    let older = (number < last).then(|| Home { page: Some(number + 1) });
    let content = html! {
        h1 { "Pages" }
        ul.pages {
            @for entry in &entries {
                li {
                    a href=(ShowPage { slug: entry.slug.clone() }) { (entry.title) }
                    " "
                    (layout::time(entry.created, false))
                }
            }
        }
        nav.paging {
            @if let Some(newer) = newer { a rel="prev" href=(newer) { "← Newer pages" } }
            @if let Some(older) = older { a rel="next" href=(older) { "Older pages →" } }
        }
    };
    Ok(layout::page("Pages", content))
}
