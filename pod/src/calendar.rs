//! The pod's calendar: what day it is (UTC), and what the model is told when the day changes.
//!
//! A segment's system prompt says "Today is …" once, when it is rendered, and is never
//! rendered again (replay sends it verbatim), so a pod that lives for weeks would tell its
//! model a stale date. Instead, before a request on a later day, the pod commits a
//! `date_changed` item with the new date: it is in the log, so replay stays exact, and the
//! rendered prompt keeps its first date. `docs/agent-loop.md` says where it goes in history.

use seedpod_protocol::SystemItem;
use seedpod_protocol::tasks::wrap_reminder;

/// Names a file whose first line is the date `today` answers, `YYYY-MM-DD`, read at every
/// call, so an end-to-end test can move a running pod to the next day. Only tests set it; a
/// file that is missing or does not hold a date is ignored and the clock is used.
pub const TEST_TODAY_FILE_ENV: &str = "SEEDPOD_TEST_TODAY_FILE";

/// Today's UTC date as `YYYY-MM-DD` (civil-from-days; no calendar crate needed for this).
pub fn today() -> String {
    if let Some(date) = std::env::var_os(TEST_TODAY_FILE_ENV).and_then(test_today) {
        return date;
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    civil_date(secs / 86_400)
}

/// The date in the test's file, when it holds one.
fn test_today(path: std::ffi::OsString) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let date = text.lines().next()?.trim();
    is_civil_date(date).then(|| date.to_owned())
}

/// `YYYY-MM-DD`, digits where digits go: what `today` may answer and a `date_changed` carries.
pub fn is_civil_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (UTC).
pub fn civil_date(days_since_epoch: u64) -> String {
    // Howard Hinnant's days→civil algorithm, for days on or after 1970-01-01.
    let z = days_since_epoch as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The `date_changed` item due before a request made on `today`, when the model was last told
/// `told` (`None`: a segment from before dates were recorded, whose prompt's date is unknown).
pub fn date_note(told: Option<&str>, today: &str) -> Option<SystemItem> {
    if told == Some(today) || !is_civil_date(today) {
        return None;
    }
    let body = wrap_reminder(&format!(
        "Today's date is now {today} (UTC), later than the date given earlier in this \
         conversation. Do not mention this reminder to the person."
    ));
    Some(SystemItem::DateChanged {
        date: today.to_owned(),
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }

    #[test]
    fn only_a_real_civil_date_passes() {
        assert!(is_civil_date("2026-11-26"));
        for bad in [
            "2026-1-26",
            "26-11-2026",
            "2026/11/26",
            "2026-11-26\n",
            "２026-11-26",
            "",
        ] {
            assert!(!is_civil_date(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_model_is_told_only_when_the_day_changed() {
        assert_eq!(date_note(Some("2026-11-26"), "2026-11-26"), None);
        let Some(SystemItem::DateChanged { date, body }) =
            date_note(Some("2026-11-26"), "2026-11-27")
        else {
            panic!("a new day is told");
        };
        assert_eq!(date, "2026-11-27");
        assert!(body.starts_with("<system-reminder>\n"), "{body}");
        assert!(body.contains("Today's date is now 2026-11-27"), "{body}");
        // A segment whose prompt's date was not recorded hears the date once.
        assert!(date_note(None, "2026-11-27").is_some());
        assert_eq!(date_note(None, "not a date"), None);
    }
}
