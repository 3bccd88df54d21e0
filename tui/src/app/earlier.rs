//! Paging back through the pod's log: when the person scrolls up to the top of what is loaded
//! (PgUp or Home reaching it, `[` with no turn above, the wheel) and the log goes further back,
//! ask the pod for the page before it (`earlier`); its answer goes above what is on screen.
//!
//! The view settles a scroll while drawing, so whether a key reached the top is only known after
//! the frame: keys note that the person moved up, and `after_draw` decides. One request at a
//! time; an answer meant for a transcript a snapshot has since replaced is dropped.
//!
//! Attached to a segment a compaction made, the snapshot holds little: the compaction cell,
//! while the turns the model kept verbatim are the end of the segment before. When that fits
//! on the screen with room to spare, the page before is asked for at once (no scroll needed),
//! so the first screen shows those turns above the compaction cell, where they were.

use std::time::Instant;

use seedpod_protocol::{Entry, Method, SegmentId};
use seedpod_transcript::{CellKind, SegmentOrigin};

use super::{App, Effect, FlashLevel, Pending};

impl App {
    /// The person moved up through the transcript; paging back may follow the next frame.
    pub(super) fn moved_up(&mut self) {
        self.moved_up = true;
    }

    /// After each frame: when the person moved up and the frame shows the top of a log that
    /// goes further back, ask for the page before it.
    pub fn after_draw(&mut self) -> Vec<Effect> {
        let moved_up = std::mem::take(&mut self.moved_up);
        let generation = self.transcript.generation();
        // Once per transcript: a page that failed is asked again by a scroll, not every frame.
        let fill = self.filled != Some(generation) && self.compaction_leaves_room();
        let wanted = moved_up || fill;
        if !wanted || !self.view.at_top() || !self.is_connected() {
            return Vec::new();
        }
        if self.is_pending(|p| matches!(p, Pending::Earlier { .. })) {
            return Vec::new();
        }
        let Some((segment_id, before_seq)) = self.transcript.earlier_request() else {
            return Vec::new();
        };
        if fill {
            self.filled = Some(generation);
        }
        self.transcript.earlier_loading();
        let pending = Pending::Earlier {
            generation: self.transcript.generation(),
        };
        let method = Method::Earlier {
            segment_id,
            before_seq,
        };
        vec![self.request(pending, method)]
    }

    /// The whole transcript is a segment a compaction started, and it fits on the screen: the
    /// turns kept from before it are in the page before.
    fn compaction_leaves_room(&self) -> bool {
        self.view.is_following()
            && !self.transcript.in_snapshot()
            && self.transcript.cells().iter().take(3).any(|cell| {
                matches!(
                    &cell.kind,
                    CellKind::SegmentStart {
                        origin: SegmentOrigin::CompactedFrom(_),
                        ..
                    }
                )
            })
    }

    /// A page arrived: above everything, if it is still for this transcript.
    pub(super) fn earlier_page(
        &mut self,
        generation: u64,
        segment_id: &SegmentId,
        entries: &[Entry],
        more: bool,
    ) -> bool {
        if generation != self.transcript.generation() {
            return false;
        }
        self.transcript.prepend_earlier(segment_id, entries, more);
        true
    }

    /// The page will not come; the head invites the next scroll to ask again.
    pub(super) fn earlier_failed(&mut self, generation: u64, reason: &str, now: Instant) {
        if generation != self.transcript.generation() {
            return;
        }
        self.transcript.earlier_failed();
        self.flash(
            FlashLevel::Warn,
            format!("earlier entries not loaded: {reason}"),
            now,
        );
    }
}
