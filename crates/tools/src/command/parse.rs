//! A command line to its words, through bash's grammar (tree-sitter-bash), or the reason it is
//! more than one plain command.
//!
//! Only what bash would pass as argv *without running anything or reading the environment*
//! becomes words: literal words, single- and double-quoted strings without expansions, and
//! backslash escapes. Everything whose value is only known at run time (expansions, globs,
//! substitutions) or that does more than run one program (lists, pipes, redirections, comments,
//! assignments, background jobs) is refused with a reason.

use tree_sitter::{Node, Parser};

/// Characters from here up (planes 3–16: unassigned, tags, variation selectors supplement,
/// private use) are never handed to the parser.
const FIRST_UNPARSED_PLANE: u32 = 0x3_0000;

/// Why a command line is not one plain command; shown in the log and to the person.
pub type Refusal = String;

/// The words of `command` as bash would pass them to the program, program first.
pub fn words(command: &str) -> Result<Vec<String>, Refusal> {
    if command.contains(['\n', '\r']) {
        return Err("it spans more than one line".into());
    }
    if command.contains('\0') {
        return Err("it contains a NUL character".into());
    }
    // tree-sitter-bash 0.25 crashes the process (SIGSEGV) on some characters from the
    // unassigned, tag and private-use planes (e.g. `{` then U+E017E), found by the fuzz test
    // in `fuzz.rs`. No real command needs them; refusing means a person is asked instead.
    if let Some(c) = command
        .chars()
        .find(|c| u32::from(*c) >= FIRST_UNPARSED_PLANE)
    {
        return Err(format!(
            "it contains the character U+{:04X}, which this check does not parse",
            u32::from(c)
        ));
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| format!("the shell grammar could not be loaded ({e})"))?;
    let tree = parser
        .parse(command, None)
        .ok_or_else(|| Refusal::from("it could not be parsed"))?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("it does not parse as a shell command".into());
    }
    let source = command.as_bytes();
    // One child and nothing else: `;`, `&` and comments are children of the program too.
    if root.child_count() != 1 {
        return Err(match named_kinds(root).as_slice() {
            [] => "it is empty".into(),
            kinds if kinds.contains(&"comment") => "it has a comment".into(),
            [_] => "it is followed by `;` or `&`".into(),
            _ => "it is more than one command".into(),
        });
    }
    let Some(top) = root.child(0) else {
        return Err("it is empty".into());
    };
    let command_node = match top.kind() {
        "command" => top,
        "redirected_statement" => redirected_body(top, source)?,
        other => return Err(describe(other)),
    };
    command_words(command_node, source)
}

fn named_kinds(node: Node<'_>) -> Vec<&'static str> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).map(|n| n.kind()).collect()
}

/// A reason for a statement that is not a simple command.
fn describe(kind: &str) -> Refusal {
    let what = match kind {
        "pipeline" => "a pipeline",
        "list" => "a list of commands (`&&`, `||`)",
        "subshell" => "a subshell",
        "compound_statement" => "a `{ …; }` group",
        "if_statement"
        | "case_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "while_statement" => "a compound command",
        "function_definition" => "a function definition",
        "declaration_command" => "a declaration (`export`, `declare`, `local` …)",
        "unset_command" => "an `unset`",
        "variable_assignment" | "variable_assignments" => "an assignment",
        "test_command" => "a test (`[[ … ]]`)",
        "negated_command" => "a negated command (`!`)",
        "comment" => "a comment",
        _ => return format!("it is not a plain command (it is a {kind})"),
    };
    format!("it is {what}")
}

/// The command of `cmd 2>&1`: only descriptor duplications may follow it.
fn redirected_body<'t>(node: Node<'t>, source: &[u8]) -> Result<Node<'t>, Refusal> {
    let mut body = None;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "command" if body.is_none() => body = Some(child),
            "file_redirect" if is_descriptor_dup(child, source) => {}
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                return Err("it redirects input or output to a file".into());
            }
            other => return Err(describe(other)),
        }
    }
    body.ok_or_else(|| "it is only a redirection".into())
}

/// `2>&1`, `>&2`, `1>&-`: descriptors duplicated or closed, no file named.
fn is_descriptor_dup(node: Node<'_>, source: &[u8]) -> bool {
    let Ok(text) = node.utf8_text(source) else {
        return false;
    };
    let text = text.trim();
    let digits = text.trim_start_matches(|c: char| c.is_ascii_digit());
    let Some(target) = digits
        .strip_prefix(">&")
        .or_else(|| digits.strip_prefix("<&"))
    else {
        return false;
    };
    target == "-" || (!target.is_empty() && target.chars().all(|c| c.is_ascii_digit()))
}

fn command_words(node: Node<'_>, source: &[u8]) -> Result<Vec<String>, Refusal> {
    let mut words = Vec::new();
    let mut cursor = node.walk();
    let mut previous_end = None;
    for child in node.children(&mut cursor) {
        // Bash joins pieces with no blank between them into one word (`''\==` is `==`); the
        // grammar can leave them as two nodes. Words that touch would be split differently
        // from what bash runs, so they are refused rather than guessed at.
        if previous_end == Some(child.start_byte()) {
            return Err("it has words that run together in a way this check cannot follow".into());
        }
        previous_end = Some(child.end_byte());
        match child.kind() {
            "command_name" => {
                let mut inner = child.walk();
                let mut parts = child.named_children(&mut inner);
                match (parts.next(), parts.next()) {
                    (Some(part), None) => words.push(word(part, source)?),
                    _ => return Err("its program name is not a plain word".into()),
                }
            }
            "variable_assignment" => {
                return Err("it sets an environment variable for the program".into());
            }
            "file_redirect" if is_descriptor_dup(child, source) => {}
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                return Err("it redirects input or output to a file".into());
            }
            _ if child.is_named() => words.push(word(child, source)?),
            // Anonymous tokens inside a command would be operators: refuse what is not known.
            other => return Err(format!("it contains `{other}`")),
        }
    }
    if words.is_empty() {
        return Err("it names no program".into());
    }
    Ok(words)
}

/// One argument's value, with quoting removed.
fn word(node: Node<'_>, source: &[u8]) -> Result<String, Refusal> {
    let text = node
        .utf8_text(source)
        .map_err(|_| Refusal::from("it is not valid UTF-8"))?;
    match node.kind() {
        "word" | "number" => unquoted(text),
        "raw_string" => Ok(text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .ok_or_else(|| Refusal::from("it has an unterminated quote"))?
            .to_string()),
        "string" => double_quoted(node, text),
        "concatenation" => {
            let mut value = String::new();
            let mut cursor = node.walk();
            for part in node.children(&mut cursor) {
                value.push_str(&word(part, source)?);
            }
            Ok(value)
        }
        "simple_expansion" | "expansion" => {
            Err("it expands a variable, whose value is only known when it runs".into())
        }
        "command_substitution" => Err("it substitutes a command's output".into()),
        "process_substitution" => Err("it substitutes a process (`<(…)`)".into()),
        "arithmetic_expansion" => Err("it has an arithmetic expansion".into()),
        "brace_expression" => Err("it has a brace expansion".into()),
        "ansi_c_string" => Err("it uses `$'…'` quoting".into()),
        "translated_string" => Err("it uses `$\"…\"` quoting".into()),
        other => Err(format!("it has an argument bash would expand ({other})")),
    }
}

/// An unquoted word: backslash escapes removed; anything bash would expand is refused.
fn unquoted(text: &str) -> Result<String, Refusal> {
    if text.starts_with('~') {
        return Err("it starts a word with `~`, which expands to a home directory".into());
    }
    let mut value = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) => value.push(escaped),
                None => return Err("it ends with a lone backslash".into()),
            },
            '*' | '?' | '[' => {
                return Err(format!(
                    "it has an unquoted `{c}`, which bash expands to file names"
                ));
            }
            '{' | '}' => return Err("it has an unquoted brace, which bash may expand".into()),
            '$' | '`' => return Err("it has an expansion".into()),
            c if c.is_control() => return Err("it contains a control character".into()),
            c => value.push(c),
        }
    }
    Ok(value)
}

/// A double-quoted string without expansions: only `\"`, `\\`, `` \` ``, `\$` are escapes.
fn double_quoted(node: Node<'_>, text: &str) -> Result<String, Refusal> {
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() != "string_content" {
            return word_refusal(child.kind());
        }
    }
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or_else(|| Refusal::from("it has an unterminated quote"))?;
    let mut value = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some('"' | '\\' | '`' | '$') => {
                    if let Some(escaped) = chars.next() {
                        value.push(escaped);
                    }
                }
                _ => value.push('\\'),
            },
            '$' | '`' => return Err("it has an expansion inside double quotes".into()),
            c if c.is_control() => return Err("it contains a control character".into()),
            c => value.push(c),
        }
    }
    Ok(value)
}

fn word_refusal(kind: &str) -> Result<String, Refusal> {
    Err(match kind {
        "simple_expansion" | "expansion" => {
            "it expands a variable, whose value is only known when it runs".into()
        }
        "command_substitution" => "it substitutes a command's output".into(),
        "arithmetic_expansion" => "it has an arithmetic expansion".into(),
        other => format!("it has a quoted part bash would expand ({other})"),
    })
}
