//! The ids that cross the wire and the log, each its own type so that one cannot be passed
//! where another is meant: an entry's log seq is not an event's broadcast seq (`committed`
//! carries both), a queue id is not either, a request id is not a queue id (an `ack` carries
//! both), a segment id is not the report id made from it, a call id is not a pod name.
//!
//! On the wire each is exactly the number or string it wraps (`#[serde(transparent)]`), so the
//! format did not change when they were introduced; the golden tests in `message.rs` and
//! `entry.rs` hold it there. A `PodName` is checked when it is made, from any source: a name
//! that would escape the pods directory or confuse a terminal never becomes a `PodName`.
//!
//! Each is sealed: made with its constructor (`EntrySeq::new(3)`, `CallId::new("c1")`), read
//! with an accessor (`get`, `as_str`), and compared only with its own kind. No `Deref`, no
//! `From` of the raw value, no `==` against a bare number or string, because each of those lets
//! a raw value stand in for an id without anyone writing that it is one:
//!
//! ```compile_fail
//! use seedpod_protocol::EntrySeq;
//! let _ = EntrySeq::new(3) == 3;
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! counter {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(u64);

        impl $name {
            pub const fn new(n: u64) -> Self {
                Self(n)
            }

            pub const fn get(self) -> u64 {
                self.0
            }

            /// The id after this one.
            pub const fn next(self) -> Self {
                Self(self.0.saturating_add(1))
            }
        }

        // An id plus a count is the id that many places on (the n-th event after a resume
        // point); ids are never added to each other.
        impl std::ops::Add<u64> for $name {
            type Output = Self;

            fn add(self, n: u64) -> Self {
                Self(self.0.saturating_add(n))
            }
        }

        impl std::ops::AddAssign<u64> for $name {
            fn add_assign(&mut self, n: u64) {
                self.0 = self.0.saturating_add(n);
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                text.parse().map(Self)
            }
        }
    };
}

counter! {
    /// The position of an entry in a pod's log: 0 for the first entry of a segment, one more for
    /// each entry after it. Durable, so comparable across pod processes.
    EntrySeq
}

impl EntrySeq {
    /// A segment's first entry: its `segment_start`.
    pub const FIRST: Self = Self(0);
}

counter! {
    /// The position of a broadcast event in one pod process's life (`welcome.instance`): a
    /// subscriber resumes from it. Not durable; meaningless across instances.
    EventSeq
}

counter! {
    /// A queued input or notification, from `queued` until it is committed or withdrawn.
    QueueId
}

impl QueueId {
    /// The first queue id a segment hands out.
    pub const FIRST: Self = Self(1);
}

counter! {
    /// A client's request, chosen by the client and echoed in the answer (`ack`, `error`, and
    /// each reply such as `history` or `command_done`): how a client tells which answer is its
    /// `run`, its `approve`, its `spawn` (docs/protocol.md). Meaningful only on one connection.
    RequestId
}

macro_rules! text_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_id! {
    /// A model's tool call, as the provider named it; tool results and approvals point at it.
    /// An approval request has no id of its own: it is the request for this call.
    CallId
}

text_id! {
    /// One segment of a pod's log, `segments/<id>.jsonl`: a UUIDv7 made when the segment
    /// starts (docs/storage.md). Origins, `earlier` pages and output cursors name segments by
    /// it. Not checked when made: a segment id from a client names a file only once the pod has
    /// found it in its own `pod.json` list.
    SegmentId
}

text_id! {
    /// A report from a child pod to its parent (`pod_event`'s `event_id`): `<segment id>/<seq>`
    /// of the entry that made it, so it survives restarts and `/clear`, and the parent drops a
    /// report it has already taken (docs/storage.md). From another sender it is any text.
    ReportId
}

text_id! {
    /// One pod process's life (`welcome.instance`, a UUIDv7): event seqs compare only within
    /// one instance, so a client that reconnects to a new one starts from a snapshot.
    InstanceId
}

/// Longest pod name; keeps file names and log lines readable.
pub const MAX_NAME_CHARS: usize = 64;

/// Why a string is not a pod name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("a pod name cannot be empty")]
    Empty,
    #[error("pod name \"{0}\" is longer than {MAX_NAME_CHARS} characters")]
    TooLong(String),
    #[error("pod name \"{0}\" cannot start with '.' or '-'")]
    BadStart(String),
    #[error("pod name \"{name}\" contains {bad:?}; use letters, digits, '.', '_' and '-'")]
    BadChar { name: String, bad: char },
}

/// A pod's name: letters, digits, `.`, `_`, `-`; not starting with `.` or `-`; at most
/// [`MAX_NAME_CHARS`]. It names a directory and a socket, so the rule is what keeps a name from
/// reaching outside them (`..`, `/`) or hiding in a listing (control characters).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PodName(String);

impl PodName {
    pub fn new(name: impl Into<String>) -> Result<Self, NameError> {
        let name = name.into();
        if name.is_empty() {
            return Err(NameError::Empty);
        }
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(NameError::TooLong(shown(&name)));
        }
        if name.starts_with('.') || name.starts_with('-') {
            return Err(NameError::BadStart(shown(&name)));
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(NameError::BadChar {
                name: shown(&name),
                bad,
            });
        }
        Ok(Self(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `pod`: the name used when nothing better can be made from a directory's name.
    pub fn default_name() -> Self {
        Self("pod".to_string())
    }
}

/// A refused name as an error message shows it: control characters escaped, long names cut,
/// so the message itself cannot disturb the terminal.
fn shown(name: &str) -> String {
    let escaped: String = name.chars().flat_map(char::escape_debug).collect();
    crate::text::ellipsize(&escaped, MAX_NAME_CHARS + 16)
}

impl TryFrom<String> for PodName {
    type Error = NameError;

    fn try_from(name: String) -> Result<Self, NameError> {
        Self::new(name)
    }
}

impl std::str::FromStr for PodName {
    type Err = NameError;

    fn from_str(name: &str) -> Result<Self, NameError> {
        Self::new(name)
    }
}

impl From<PodName> for String {
    fn from(name: PodName) -> String {
        name.0
    }
}

// A pod name is a file name component by construction (that is what the rule is for).
impl AsRef<std::path::Path> for PodName {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.0)
    }
}

impl AsRef<std::ffi::OsStr> for PodName {
    fn as_ref(&self) -> &std::ffi::OsStr {
        std::ffi::OsStr::new(&self.0)
    }
}

impl fmt::Display for PodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_their_bare_value_on_the_wire() {
        assert_eq!(serde_json::to_string(&EntrySeq::new(7)).unwrap(), "7");
        assert_eq!(serde_json::to_string(&EventSeq::new(8)).unwrap(), "8");
        assert_eq!(serde_json::to_string(&QueueId::new(9)).unwrap(), "9");
        assert_eq!(serde_json::to_string(&RequestId::new(10)).unwrap(), "10");
        assert_eq!(serde_json::to_string(&CallId::new("c1")).unwrap(), "\"c1\"");
        let segment = SegmentId::new("0193f0c2-7c1e");
        assert_eq!(
            serde_json::to_string(&segment).unwrap(),
            "\"0193f0c2-7c1e\""
        );
        assert_eq!(
            serde_json::to_string(&ReportId::new("s/4")).unwrap(),
            "\"s/4\""
        );
        assert_eq!(
            serde_json::to_string(&InstanceId::new("i")).unwrap(),
            "\"i\""
        );
        let name = PodName::new("a-b.c_1").unwrap();
        assert_eq!(serde_json::to_string(&name).unwrap(), "\"a-b.c_1\"");
        let back: PodName = serde_json::from_str("\"a-b.c_1\"").unwrap();
        assert_eq!(back, name);
    }

    #[test]
    fn a_pod_name_that_escapes_or_hides_is_refused_even_from_the_wire() {
        for bad in [
            "",
            "..",
            ".hidden",
            "-x",
            "a/b",
            "../etc",
            "a\u{1b}[2J",
            "a b",
            "é",
        ] {
            assert!(PodName::new(bad).is_err(), "{bad:?} was accepted");
            let json = serde_json::to_string(bad).unwrap();
            assert!(serde_json::from_str::<PodName>(&json).is_err(), "{bad:?}");
        }
        assert!(PodName::new("a".repeat(MAX_NAME_CHARS)).is_ok());
        assert!(matches!(
            PodName::new("a".repeat(MAX_NAME_CHARS + 1)),
            Err(NameError::TooLong(_))
        ));
        assert!(PodName::new("a/b").unwrap_err().to_string().contains("'/'"));
    }

    #[test]
    fn a_refused_name_cannot_drive_the_terminal_through_its_error() {
        let err = PodName::new("x\u{1b}]52;c;ZXZpbA==\u{7}y").unwrap_err();
        let message = err.to_string();
        assert!(!message.contains('\u{1b}'), "{message:?}");
        assert!(!message.contains('\u{7}'), "{message:?}");
        let long = PodName::new(format!("{}\n", "b".repeat(5000))).unwrap_err();
        assert!(long.to_string().len() < 200);
    }

    #[test]
    fn seqs_step_and_compare() {
        assert_eq!(EntrySeq::new(3).next(), EntrySeq::new(4));
        assert!(EventSeq::new(2) < EventSeq::new(3));
        assert_eq!(QueueId::new(5).get(), 5);
    }
}
