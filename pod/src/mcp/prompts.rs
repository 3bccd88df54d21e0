//! MCP prompts as slash commands: `/mcp__SERVER__PROMPT arg=value …` (docs/configuration.md
//! §MCP prompts and resources).
//!
//! A server's prompts are listed when it starts (and again when it says they changed) and kept
//! in its `ServerView`; the composer's `/` completion offers them from there. Running one asks
//! the server for its messages (`prompts/get`) and sends their text as the person's input, so it
//! is committed like anything typed (invariant 1) and replays from the log (invariant 2).
//!
//! Must not own: when the input is committed (the controller), how the server is reached.

use rmcp::model::{ContentBlock, GetPromptResult, Prompt, PromptMessage, ResourceContents, Role};
use serde_json::{Map, Value};

use super::names;

/// Most prompts kept of one server: more would only crowd the completion popup.
pub const MAX_PROMPTS_PER_SERVER: usize = 128;
/// Most characters of a prompt's or an argument's description kept for the popup.
const MAX_DETAIL_CHARS: usize = 120;
/// Most characters of a prompt's text sent as input: a server decides how long it is.
pub const MAX_PROMPT_CHARS: usize = 100_000;

/// One argument a prompt takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArg {
    pub name: String,
    pub required: bool,
    pub description: String,
}

/// One prompt as the pod knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// `mcp__SERVER__PROMPT`, what a person types after `/`.
    pub command: String,
    /// The server's own name, what `prompts/get` names.
    pub original: String,
    pub description: String,
    pub arguments: Vec<PromptArg>,
}

impl PromptInfo {
    pub fn from_rmcp(server: &str, prompt: Prompt) -> PromptInfo {
        let description = prompt
            .description
            .or(prompt.title)
            .map(|d| clean_line(&d, MAX_DETAIL_CHARS))
            .unwrap_or_default();
        let arguments = prompt
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|a| PromptArg {
                name: clean_line(&a.name, MAX_DETAIL_CHARS),
                required: a.required.unwrap_or(false),
                description: a
                    .description
                    .map(|d| clean_line(&d, MAX_DETAIL_CHARS))
                    .unwrap_or_default(),
            })
            .collect();
        PromptInfo {
            command: names::exposed_name(server, &prompt.name),
            original: prompt.name,
            description,
            arguments,
        }
    }

    /// The completion popup's line: its arguments (`<required>`, `[optional]`) and what it does.
    pub fn detail(&self) -> String {
        let mut parts: Vec<String> = self
            .arguments
            .iter()
            .map(|a| match a.required {
                true => format!("<{}>", a.name),
                false => format!("[{}]", a.name),
            })
            .collect();
        if !self.description.is_empty() {
            parts.push(format!("— {}", self.description));
        }
        parts.join(" ")
    }

    /// The arguments `typed` after the command gives, by name (`key=value`) or in the prompt's
    /// order; a value may be quoted (`"two words"`). `Err` says what is wrong in a person's
    /// words: an unknown name, a value too many, a required argument missing.
    pub fn arguments_from(&self, typed: &str) -> Result<Map<String, Value>, String> {
        let words = split_words(typed)?;
        let mut given = Map::new();
        let mut next = 0;
        for word in words {
            let (name, value) = match word.split_once('=') {
                Some((name, value)) if self.arguments.iter().any(|a| a.name == name) => {
                    (name.to_owned(), value.to_owned())
                }
                Some((name, _)) if is_name(name) => {
                    return Err(format!(
                        "/{} has no argument {name}; {}",
                        self.command,
                        self.usage()
                    ));
                }
                _ => {
                    // Positional: the next argument not named yet.
                    while self
                        .arguments
                        .get(next)
                        .is_some_and(|a| given.contains_key(&a.name))
                    {
                        next += 1;
                    }
                    let Some(arg) = self.arguments.get(next) else {
                        return Err(format!(
                            "/{} takes {} argument(s), and \"{}\" is one too many; {}",
                            self.command,
                            self.arguments.len(),
                            seedpod_protocol::printable_line(&word),
                            self.usage()
                        ));
                    };
                    next += 1;
                    (arg.name.clone(), word)
                }
            };
            given.insert(name, Value::String(value));
        }
        let missing: Vec<&str> = self
            .arguments
            .iter()
            .filter(|a| a.required && !given.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "/{} needs {}; {}",
                self.command,
                missing.join(", "),
                self.usage()
            ));
        }
        Ok(given)
    }

    fn usage(&self) -> String {
        if self.arguments.is_empty() {
            return format!("it takes no arguments: /{}", self.command);
        }
        format!("usage: /{} {}", self.command, self.detail_args())
    }

    fn detail_args(&self) -> String {
        self.arguments
            .iter()
            .map(|a| match a.required {
                true => format!("{}=<value>", a.name),
                false => format!("[{}=<value>]", a.name),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn is_name(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `typed` split at whitespace, with `"…"` and `'…'` keeping spaces inside one word (a quote
/// may start after `name=`). An unclosed quote is an error rather than a guess.
fn split_words(typed: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in typed.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        return Err(format!("a quote ({q}) is not closed"));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// The text sent as the person's input for a prompt's messages. The person's messages are
/// joined in order; an assistant message is kept, marked as what the prompt puts in the
/// assistant's mouth (the pod sends one input, never a made-up assistant turn); a resource
/// part is its text (a binary one a placeholder line), an image or audio part a placeholder
/// line. The whole is cut at `MAX_PROMPT_CHARS`, with a note.
pub fn render(server: &str, prompt: &str, result: GetPromptResult) -> String {
    let mut parts: Vec<String> = Vec::new();
    for PromptMessage { role, content, .. } in result.messages {
        let text = content_text(&content);
        parts.push(match role {
            Role::User => text,
            Role::Assistant => format!(
                "[The prompt {prompt} of MCP server {server} has the assistant say:]\n{text}"
            ),
        });
    }
    let text = parts.join("\n\n");
    match seedpod_protocol::char_prefix(&text, MAX_PROMPT_CHARS) {
        Some(kept) => format!(
            "{kept}\n[prompt cut: {} more characters]",
            text.chars().count() - kept.chars().count()
        ),
        None => text,
    }
}

/// A server's name or description as one line for a popup: control characters shown escaped
/// (a name cannot steer the terminal), at most `max` characters.
pub fn clean_line(text: &str, max: usize) -> String {
    seedpod_protocol::ellipsize(seedpod_protocol::printable_line(text.trim()).as_ref(), max)
}

fn content_text(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image: {}, not included]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[audio: {}, not included]", audio.mime_type),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[Resource: {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[Resource: {uri} ({}, {} bytes), binary, not included]",
                mime_type.as_deref().unwrap_or("no type given"),
                super::image::base64_len(blob)
            ),
            // A kind of contents newer than this client.
            _ => "[a resource of a kind this pod does not know, not included]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[Resource link: {}]", link.uri),
        _ => "[a part of a kind this pod does not know, not included]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn greet() -> PromptInfo {
        PromptInfo {
            command: "mcp__t__greet".into(),
            original: "greet".into(),
            description: "Greet someone.".into(),
            arguments: vec![
                PromptArg {
                    name: "name".into(),
                    required: true,
                    description: String::new(),
                },
                PromptArg {
                    name: "style".into(),
                    required: false,
                    description: String::new(),
                },
            ],
        }
    }

    fn args(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
            .collect()
    }

    #[test]
    fn arguments_are_named_positional_or_quoted() {
        let p = greet();
        assert_eq!(
            p.arguments_from("name=Ann style=warm").unwrap(),
            args(&[("name", "Ann"), ("style", "warm")])
        );
        assert_eq!(
            p.arguments_from("Ann warm").unwrap(),
            args(&[("name", "Ann"), ("style", "warm")])
        );
        assert_eq!(
            p.arguments_from("style=warm \"Ann Lee\"").unwrap(),
            args(&[("name", "Ann Lee"), ("style", "warm")])
        );
        assert_eq!(
            p.arguments_from("name='a = b'").unwrap(),
            args(&[("name", "a = b")])
        );
        // A value with `=` that names no argument is a positional value.
        assert_eq!(
            p.arguments_from("x+y=z").unwrap(),
            args(&[("name", "x+y=z")])
        );
    }

    #[test]
    fn bad_arguments_are_refused_in_words() {
        let p = greet();
        let cases = [
            ("", "needs name"),
            ("style=warm", "needs name"),
            ("mood=sad", "has no argument mood"),
            ("Ann warm extra", "one too many"),
            ("name=\"Ann", "not closed"),
        ];
        for (typed, expected) in cases {
            let err = p.arguments_from(typed).unwrap_err();
            assert!(err.contains(expected), "{typed:?}: {err}");
            assert!(!err.contains("Error"), "{err}");
        }
        assert_eq!(p.detail(), "<name> [style] — Greet someone.");
    }

    #[test]
    fn messages_become_one_input_with_assistant_lines_marked() {
        let result = GetPromptResult::new(vec![
            PromptMessage::new_text(Role::User, "Look at this."),
            PromptMessage::new(
                Role::User,
                ContentBlock::resource(ResourceContents::text("body", "x://a")),
            ),
            PromptMessage::new_text(Role::Assistant, "Will do."),
            PromptMessage::new(Role::User, ContentBlock::image("AAAA", "image/png")),
            PromptMessage::new(
                Role::User,
                ContentBlock::resource(ResourceContents::blob("AAECAw==", "x://b")),
            ),
        ]);
        let text = render("t", "p", result);
        assert_eq!(
            text,
            "Look at this.\n\n[Resource: x://a]\nbody\n\n[The prompt p of MCP server t has the \
             assistant say:]\nWill do.\n\n[image: image/png, not included]\n\n[Resource: x://b \
             (no type given, 4 bytes), binary, not included]"
        );
        let huge = GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            "y".repeat(MAX_PROMPT_CHARS + 10),
        )]);
        let cut = render("t", "p", huge);
        assert!(
            cut.ends_with("[prompt cut: 10 more characters]"),
            "{}",
            &cut[cut.len() - 40..]
        );
    }
}
