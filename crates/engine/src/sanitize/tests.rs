//! Table tests: each row a raw answer in the shape real models produce, and what is kept.

use super::{Cleaned, clean, fences, repeats, think, tool_text, wrappers};

fn cleaned(text: &str, reasoning: &str) -> Cleaned {
    Cleaned {
        text: text.into(),
        reasoning: reasoning.into(),
    }
}

#[test]
fn whole_pipeline_on_real_shapes() {
    let rows: &[(&str, &str, Cleaned)] = &[
        (
            "plain text is untouched",
            "Hello there.",
            cleaned("Hello there.", ""),
        ),
        (
            "qwen3 think block",
            "<think>\nThe user greets me.\n</think>\n\nHello!",
            cleaned("Hello!", "The user greets me."),
        ),
        (
            "deepseek-r1: the template opened the tag",
            "Okay, the user wants a joke.\n</think>\n\nWhy did the chicken…",
            cleaned("Why did the chicken…", "Okay, the user wants a joke."),
        ),
        (
            "think never closed: all of it is reasoning",
            "<think>I am still thinking about",
            cleaned("", "I am still thinking about"),
        ),
        (
            "upper-case tag",
            "<THINK>plan</THINK>Done.",
            cleaned("Done.", "plan"),
        ),
        (
            "thinking tag mid-text",
            "First part.\n<thinking>hmm</thinking>\nSecond part.",
            cleaned("First part.\n\nSecond part.", "hmm"),
        ),
        (
            "antThinking",
            "<antThinking>should I make an artifact?</antThinking>Here it is.",
            cleaned("Here it is.", "should I make an artifact?"),
        ),
        (
            "hermes/qwen tool call as text",
            "Let me check.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>",
            cleaned("Let me check.", ""),
        ),
        (
            "two tool calls as text",
            "<tool_call>{\"name\":\"a\"}</tool_call>\n<tool_call>{\"name\":\"b\"}</tool_call>",
            cleaned("", ""),
        ),
        (
            "tool call cut off at the end",
            "Checking now <tool_call>{\"name\": \"shell\", \"argu",
            cleaned("Checking now", ""),
        ),
        (
            "qwen3-coder xml function",
            "I'll list it.\n<function=list_dir>\n<parameter=path>\n.\n</parameter>\n</function>",
            cleaned("I'll list it.", ""),
        ),
        (
            "anthropic-style function_calls text",
            "<function_calls>\n<invoke name=\"shell\">\n<parameter name=\"command\">ls</parameter>\n</invoke>\n</function_calls>\nDone.",
            cleaned("Done.", ""),
        ),
        (
            "stray closing tags",
            "Answer.</tool_call></function>",
            cleaned("Answer.", ""),
        ),
        (
            "deepseek full-width markers",
            "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>ls<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            cleaned("Sure.", ""),
        ),
        (
            "llama python_tag",
            "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
            cleaned("", ""),
        ),
        (
            "llama python_tag after prose",
            "Looking it up.\n\n<|python_tag|>{\"name\": \"x\"}",
            cleaned("Looking it up.", ""),
        ),
        (
            "mistral TOOL_CALLS",
            "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"x\"}}]",
            cleaned("", ""),
        ),
        (
            "mistral TOOL_CALLS after an answer",
            "The file is short.\n\n[TOOL_CALLS] [{\"name\": \"a\"}]\n\nAnything else?",
            cleaned("The file is short.\n\n\n\nAnything else?", ""),
        ),
        (
            "downgraded tool call lines",
            "[Tool Call: shell]\n{\"command\": \"ls\"}\n\nThe listing shows two files.",
            cleaned("The listing shows two files.", ""),
        ),
        (
            "imitated tool result",
            "[Tool Result shell]\na.txt\nb.txt\n\nTwo files.",
            cleaned("Two files.", ""),
        ),
        (
            "historical context marker",
            "[Historical context: earlier turns]\nsummary…\n\nContinuing.",
            cleaned("Continuing.", ""),
        ),
        (
            "final wrapper",
            "<final>The answer is 42.</final>",
            cleaned("The answer is 42.", ""),
        ),
        (
            "answer wrapper with think",
            "<think>compute</think><answer>\n42\n</answer>",
            cleaned("42", "compute"),
        ),
        (
            "echoed system message block",
            "[System Message] The user is away.\nMore system text.\n\nI will wait.",
            cleaned("I will wait.", ""),
        ),
        (
            "echoed notification",
            "[notification] build done\n\nGood, the build is done.",
            cleaned("Good, the build is done.", ""),
        ),
        (
            "echoed file header",
            "[File: src/main.rs]\nfn main() {}\n\nThat is the whole program.",
            cleaned("That is the whole program.", ""),
        ),
        (
            "stuttered paragraph",
            "I fixed the bug.\n\nI fixed the bug.\n\nI fixed the bug.\n\nRun the tests.",
            cleaned("I fixed the bug.\n\nRun the tests.", ""),
        ),
        (
            "repeats that are not consecutive stay",
            "Yes.\n\nNo.\n\nYes.",
            cleaned("Yes.\n\nNo.\n\nYes.", ""),
        ),
        (
            "leading blank lines go, indentation stays",
            "\n\n   \n    indented code line\nnext",
            cleaned("    indented code line\nnext", ""),
        ),
        (
            "a fenced example keeps its tags",
            "Models emit this:\n```xml\n<tool_call>{\"name\": \"x\"}</tool_call>\n<think>a</think>\n```\nDon't.",
            cleaned(
                "Models emit this:\n```xml\n<tool_call>{\"name\": \"x\"}</tool_call>\n<think>a</think>\n```\nDon't.",
                "",
            ),
        ),
        (
            "tilde fence protects too, and cleaning resumes after it",
            "~~~\n[TOOL_CALLS]\n~~~\n<final>ok</final>",
            cleaned("~~~\n[TOOL_CALLS]\n~~~\nok", ""),
        ),
        (
            "an unclosed fence protects the rest",
            "Example:\n```\n<think>x</think>",
            cleaned("Example:\n```\n<think>x</think>", ""),
        ),
        (
            "a word that merely starts like a tag stays",
            "Use <invoker> and <thinker> here.",
            cleaned("Use <invoker> and <thinker> here.", ""),
        ),
        (
            "markers mid-line are prose",
            "I saw the [notification] you sent.",
            cleaned("I saw the [notification] you sent.", ""),
        ),
        (
            "only garbage leaves nothing",
            "\n<tool_call>{}</tool_call>\n",
            cleaned("", ""),
        ),
        (
            "NUL bytes from a broken server",
            "Hel\u{0}lo\u{0}",
            cleaned("Hello", ""),
        ),
        (
            "multibyte text around tags",
            "<think>日本語で考える</think>こんにちは 👋🏽",
            cleaned("こんにちは 👋🏽", "日本語で考える"),
        ),
    ];
    assert!(rows.len() >= 30);
    for (what, raw, want) in rows {
        assert_eq!(&clean(raw), want, "{what}: {raw:?}");
    }
}

#[test]
fn cleaning_is_idempotent() {
    for raw in [
        "<think>a</think>b\n\nb",
        "x<tool_call>y",
        "```\n<final>\n```\n<final>z</final>",
        "[System Message]\n\nq",
    ] {
        let once = clean(raw);
        assert_eq!(clean(&once.text).text, once.text, "{raw:?}");
    }
}

#[test]
fn steps_alone() {
    assert_eq!(
        think::split_leading("  <think>p</think>rest"),
        ("rest".into(), "p".into())
    );
    assert_eq!(
        think::split_leading("no think here"),
        ("no think here".into(), String::new())
    );
    // A `</think>` inside code is not the end of reasoning.
    assert_eq!(think::split_leading("```\n</think>\n```").1, String::new());
    assert_eq!(
        tool_text::strip_garbled_xml("a<tool_response>r</tool_response>b"),
        "ab"
    );
    assert_eq!(tool_text::strip_downgraded_calls("ok\n"), "ok\n");
    assert_eq!(wrappers::strip_final_tags("<Final>x</FINAL>"), "x");
    assert_eq!(
        wrappers::strip_echoed_markers("<system-reminder>\nfake\n\nreal"),
        "\nreal"
    );
    assert_eq!(repeats::collapse_repeated_paragraphs("a\n\na"), "a\n\n");
    assert_eq!(
        fences::map_prose("p\n```\nc\n```\nq", |s| s.to_uppercase()),
        "P\n```\nc\n```\nQ"
    );
}

use proptest::prelude::*;

/// Model-ish text: any characters, and the markers the pipeline looks for.
fn model_text() -> impl Strategy<Value = String> {
    let marker = prop::sample::select(vec![
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "```",
        "~~~",
        "\n\n",
        "[TOOL_CALLS]",
        "<final>",
        "[System Message]",
        "<function=",
        "</function>",
        "<|python_tag|>",
        "<invoke ",
        "\n",
        "[Tool Call: x]",
    ])
    .prop_map(str::to_string);
    prop::collection::vec(prop_oneof!["\\PC{0,12}", marker], 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    /// Whatever a model streams: no panic, nothing invented (the answer and the reasoning
    /// together are never longer than the raw text), and cleaning twice changes nothing more.
    #[test]
    fn fuzz_any_answer_cleans_without_panic_and_settles(raw in model_text()) {
        let once = clean(&raw);
        prop_assert!(once.text.len() + once.reasoning.len() <= raw.len());
        let twice = clean(&once.text);
        prop_assert_eq!(&twice.text, &once.text, "from {:?}", raw);
    }
}
