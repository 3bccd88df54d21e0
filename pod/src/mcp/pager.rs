//! Listing a server's tools, prompts and resources page by page, within bounds
//! (docs/configuration.md §MCP servers, "Lists").
//!
//! A list comes in pages: each answer may carry a `nextCursor` to ask for the next. rmcp's
//! `list_all_*` follow it for as long as the server hands one out, so a hostile or broken
//! server could page forever (only the start time limit and the per-answer size bound would
//! stop it). Here the listing stops at `MAX_PAGES` pages, at `MAX_ITEMS` items, or at a cursor
//! the server already handed out (a loop): what was listed so far is kept, and the caller is
//! told which bound ended it, in words, for an alert.
//!
//! The bounds are far above any real server (the pod offers at most 128 tools and 128 prompts
//! and 500 resources of one server; a large server's list is a few pages), and low enough that
//! the worst a server can do is 100 round trips, each bounded by the transport's size limit.

use std::collections::HashSet;
use std::future::Future;
use std::hash::{BuildHasher as _, RandomState};

use rmcp::model::{PaginatedRequestParams, Prompt, Resource, Tool};
use rmcp::service::{Peer, RoleClient, ServiceError};

/// The most pages of one list asked for.
pub const MAX_PAGES: usize = 100;
/// The most items of one list kept.
pub const MAX_ITEMS: usize = 10_000;

/// Why a listing ended before the server's list did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// It still handed out a next page after `MAX_PAGES`.
    Pages,
    /// It listed more than `MAX_ITEMS`.
    Items,
    /// It handed out a cursor it had handed out before.
    Loop,
}

/// A list as far as it was read.
#[derive(Debug)]
pub struct Listed<T> {
    pub items: Vec<T>,
    pub cut: Option<Cut>,
}

impl<T> Listed<T> {
    /// What to tell people when the listing was cut, naming what was listed (`"tools"`).
    pub fn note(&self, what: &str) -> Option<String> {
        let kept = self.items.len();
        self.cut.map(|cut| match cut {
            Cut::Pages => format!(
                "its list of {what} did not end after {MAX_PAGES} pages; the {kept} {what} of \
                 those pages are used"
            ),
            Cut::Items => {
                format!("it lists more than {MAX_ITEMS} {what}; the first {MAX_ITEMS} are used")
            }
            Cut::Loop => format!(
                "its list of {what} pointed back to a page it had already sent; the {kept} \
                 {what} listed until then are used"
            ),
        })
    }
}

pub async fn tools(peer: &Peer<RoleClient>) -> Result<Listed<Tool>, ServiceError> {
    pages(|cursor| async move {
        let page = peer.list_tools(params(cursor)).await?;
        Ok((page.tools, page.next_cursor))
    })
    .await
}

pub async fn prompts(peer: &Peer<RoleClient>) -> Result<Listed<Prompt>, ServiceError> {
    pages(|cursor| async move {
        let page = peer.list_prompts(params(cursor)).await?;
        Ok((page.prompts, page.next_cursor))
    })
    .await
}

pub async fn resources(peer: &Peer<RoleClient>) -> Result<Listed<Resource>, ServiceError> {
    pages(|cursor| async move {
        let page = peer.list_resources(params(cursor)).await?;
        Ok((page.resources, page.next_cursor))
    })
    .await
}

fn params(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    Some(PaginatedRequestParams::default().with_cursor(cursor))
}

/// Ask `page` for pages, each time with the cursor the last one handed out, within the bounds.
async fn pages<T, E, F, Fut>(mut page: F) -> Result<Listed<T>, E>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), E>>,
{
    // Cursors are remembered by a keyed hash: a server's cursor may be long, and a hundred of
    // them need not be kept.
    let hasher = RandomState::new();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut items: Vec<T> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let (listed, next) = page(cursor.take()).await?;
        let room = MAX_ITEMS - items.len();
        let more = listed.len() > room;
        items.extend(listed.into_iter().take(room));
        if more {
            return Ok(Listed {
                items,
                cut: Some(Cut::Items),
            });
        }
        let Some(next) = next else {
            return Ok(Listed { items, cut: None });
        };
        if !seen.insert(hasher.hash_one(&next)) {
            return Ok(Listed {
                items,
                cut: Some(Cut::Loop),
            });
        }
        cursor = Some(next);
    }
    Ok(Listed {
        items,
        cut: Some(Cut::Pages),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list of `pages` pages of `per_page` numbers, each page's cursor made by `next`.
    async fn list(
        per_page: usize,
        next: impl Fn(usize) -> Option<String>,
    ) -> (Listed<usize>, Vec<Option<String>>) {
        let asked = std::sync::Mutex::new(Vec::new());
        let listed = pages(|cursor: Option<String>| {
            let n = asked.lock().map(|mut a| {
                a.push(cursor.clone());
                a.len() - 1
            });
            let n = n.unwrap_or_default();
            let page: Vec<usize> = (0..per_page).map(|i| n * per_page + i).collect();
            let next = next(n);
            async move { Ok::<_, ()>((page, next)) }
        })
        .await
        .unwrap();
        (listed, asked.into_inner().unwrap())
    }

    #[tokio::test]
    async fn a_list_that_ends_is_read_whole_following_each_cursor() {
        let (listed, asked) = list(3, |n| (n < 2).then(|| format!("c{}", n + 1))).await;
        assert_eq!(listed.items, (0..9).collect::<Vec<_>>());
        assert_eq!(listed.cut, None);
        assert_eq!(listed.note("tools"), None);
        assert_eq!(asked, [None, Some("c1".into()), Some("c2".into())]);
    }

    #[tokio::test]
    async fn an_endless_list_stops_at_the_page_bound_keeping_what_was_listed() {
        let (listed, asked) = list(2, |n| Some(format!("c{}", n + 1))).await;
        assert_eq!(asked.len(), MAX_PAGES);
        assert_eq!(listed.items.len(), 2 * MAX_PAGES);
        assert_eq!(listed.cut, Some(Cut::Pages));
        let note = listed.note("tools").unwrap();
        assert!(note.contains("did not end after 100 pages"), "{note}");
        assert!(note.contains("the 200 tools"), "{note}");
    }

    #[tokio::test]
    async fn a_cursor_handed_out_again_ends_the_listing() {
        // c1, c2, c1: a loop of two pages.
        let (listed, asked) = list(1, |n| Some(format!("c{}", n % 2 + 1))).await;
        assert_eq!(asked, [None, Some("c1".into()), Some("c2".into())]);
        assert_eq!(listed.items, [0, 1, 2]);
        assert_eq!(listed.cut, Some(Cut::Loop));
        let note = listed.note("prompts").unwrap();
        assert!(note.contains("pointed back"), "{note}");
    }

    #[tokio::test]
    async fn more_items_than_the_bound_are_cut_to_it() {
        let (listed, asked) = list(4000, |n| Some(format!("c{}", n + 1))).await;
        assert_eq!(asked.len(), 3);
        assert_eq!(listed.items.len(), MAX_ITEMS);
        assert_eq!(listed.items[MAX_ITEMS - 1], MAX_ITEMS - 1);
        assert_eq!(listed.cut, Some(Cut::Items));
        let note = listed.note("resources").unwrap();
        assert!(note.contains("more than 10000 resources"), "{note}");
    }

    #[tokio::test]
    async fn an_error_on_any_page_is_the_listings_error() {
        let mut n = 0;
        let result = pages(|_cursor: Option<String>| {
            n += 1;
            let at = n;
            async move {
                match at {
                    3 => Err("broke"),
                    _ => Ok((vec![at], Some(format!("c{at}")))),
                }
            }
        })
        .await;
        assert_eq!(result.err(), Some("broke"));
    }
}
