//! A pod's counters add up over its whole life: tokens, runs and tool calls in `seedpod ls
//! --json` are the sum of what the model server reported, across a compaction, a `/clear` and
//! a restart from the log (docs/storage.md, `segment_start.totals`).

use seedpod_e2e::TestHome;
use serde_json::{Value, json};

fn listing(sb: &TestHome, name: &str) -> Value {
    let out = sb.ok(&["ls", "--json"]);
    out.lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("ls --json line"))
        .find(|pod| pod["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {out}"))
}

#[tokio::test]
async fn counters_in_ls_add_up_across_compaction_clear_and_restart() {
    let sb = TestHome::new();
    let script = sb.script(
        "s.jsonl",
        &[
            json!({"tool_calls": [{"id": "c1", "name": "nope", "arguments": "{}"}],
                   "usage": {"input_tokens": 100, "output_tokens": 7,
                             "cache_read_tokens": 3, "cache_creation_tokens": 2}}),
            json!({"text": "done", "usage": {"input_tokens": 130, "output_tokens": 5}}),
            // The compaction's summary (no usage reported, so it adds nothing).
            json!({"text": "SUMMARY: one run"}),
            json!({"text": "after compaction", "usage": {"input_tokens": 40, "output_tokens": 11}}),
            json!({"text": "after clear", "usage": {"input_tokens": 20, "output_tokens": 13}}),
        ],
    );
    sb.start_scripted("p", &script);
    sb.ok(&["send", "p", "go"]);
    let reply = sb.ok(&["send", "p", "/compact"]);
    assert!(reply.contains("compacted"), "{reply}");
    sb.ok(&["send", "p", "again"]);
    sb.ok(&["send", "p", "/clear"]);
    sb.ok(&["send", "p", "once more"]);

    let expect_usage = json!({"input_tokens": 290, "output_tokens": 36,
                              "cache_read_tokens": 3, "cache_creation_tokens": 2});
    let pod = listing(&sb, "p");
    let totals = &pod["totals"];
    assert_eq!(totals["usage"], expect_usage, "{pod}");
    assert_eq!(totals["runs"], 3, "{pod}");
    assert_eq!(totals["tool_calls"], 1, "{pod}");
    // The active segment's own usage keeps its meaning: only the run after the clear.
    assert_eq!(pod["usage"]["input_tokens"], 20, "{pod}");

    // A restore reads the active segment only and still knows the totals.
    sb.kill9("p").await;
    sb.start_scripted("p", &script);
    let pod = listing(&sb, "p");
    assert_eq!(pod["totals"]["usage"], expect_usage, "{pod}");
    assert_eq!(pod["totals"]["runs"], 3, "{pod}");
    assert_eq!(pod["totals"]["tool_calls"], 1, "{pod}");

    let table = sb.ok(&["ls"]);
    assert!(
        table.contains("290/36"),
        "lifetime tokens in the table:\n{table}"
    );
}
