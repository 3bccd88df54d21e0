//! Fuzzing the command-line parser with arbitrary text. Whatever the model writes: no
//! panic, and what it accepts is stable — words it returns, quoted back into a line, parse to
//! the same words or are refused, never to different words (so a standing approval shown as
//! that line never means something other than what it covers). The grammar refuses some
//! plain-looking words (`A@`); refusing is the safe direction, since it means asking a person.
//! `PROPTEST_CASES` raises the number of cases (docs/testing.md).

use proptest::prelude::*;
use seedpod_protocol::quote_words;

use super::judge_command;
use super::parse::words;

/// Shell-ish text: quotes, escapes, operators, expansions, and plain words.
fn shellish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        "[a-zA-Z0-9_./=:-]{1,8}",
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just(" ".to_string()),
        prop::sample::select(vec![
            "|", "&&", ";", ">", "<", "2>&1", "$(", ")", "`", "$HOME", "${x}", "*", "~", "#",
            "{a,b}", "$'\\n'", "<<<", "&", "(", "\t", "!", "[[", "]]",
        ])
        .prop_map(str::to_string),
        "\\PC{1,3}",
    ];
    proptest::collection::vec(token, 0..16).prop_map(|tokens| tokens.concat())
}

proptest! {
    #[test]
    fn fuzz_any_text_parses_or_is_refused_without_panic(line in shellish()) {
        let _ = words(&line);
        let _ = judge_command(&line, None);
    }

    #[test]
    fn fuzz_accepted_words_quoted_back_never_parse_to_other_words(line in shellish()) {
        if let Ok(parsed) = words(&line) {
            prop_assume!(!parsed.is_empty());
            if let Ok(again) = words(&quote_words(&parsed)) {
                prop_assert_eq!(again, parsed, "from {:?}", line);
            }
        }
    }
}

/// Found by the property above: a program whose name has `=` in it (`\a=`) was shown as
/// `a=`, which bash reads as an assignment.
#[test]
fn a_first_word_with_an_equals_sign_stays_a_program() {
    let parsed = words("\\a=''").unwrap();
    assert_eq!(parsed, ["a="]);
    assert_eq!(quote_words(&parsed), "'a='");
    assert_eq!(words(&quote_words(&parsed)), Ok(parsed));
    // Pieces the grammar splits but bash joins are refused, not read as two words.
    assert!(words("''\\==").is_err());
    assert!(words("''\\rm -rf x").is_err());
    // Later words keep their plain form.
    let flags = vec!["cargo".to_string(), "--features=x".to_string()];
    assert_eq!(quote_words(&flags), "cargo --features=x");
}

/// Found by the first property: tree-sitter-bash crashed the whole process (SIGSEGV) on `{`
/// followed by a character from the high planes. Such text is refused before it is parsed.
#[test]
fn characters_that_crashed_the_grammar_are_refused_first() {
    for line in [
        "{\u{e017e}",
        "echo {\u{e0001}}",
        "x {\u{f0000}",
        "{\u{10ffff}",
    ] {
        let refused = words(line).unwrap_err();
        assert!(refused.contains("does not parse"), "{refused}");
    }
    // Emoji and CJK are ordinary text.
    assert_eq!(words("echo 😀 日本").unwrap(), ["echo", "😀", "日本"]);
}
