//! What tests share: the real tool declarations — the pod's catalogue, as the binary passes it
//! in (a dev-dependency) — so tests preview calls exactly as the TUI does when attached.

use seedpod_protocol::Preview;

use crate::app::DeclLookup;

/// The lookup the `seedpod` binary gives the TUI.
pub const DECLS: DeclLookup = seedpod_pod::catalogue::decl_for;

/// How the declaration of `tool` previews its calls.
pub fn preview_of(tool: &str) -> Preview {
    DECLS(tool).map_or(Preview::Arguments, |decl| decl.preview)
}
