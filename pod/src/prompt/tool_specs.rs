//! The tool schemas a segment offers in each prompt mode. In compact mode each description is
//! cut to its first sentence and the parameters lose their descriptions (the names and types
//! stay, which is what a call needs), and the tools whose declarations say so are left out
//! (`ToolDecl::in_small_prompt`: `update_tasks` always, the child-pod tools unless the person
//! configured one of them). Deterministic: the same specs give the same bytes, so a segment's
//! stored tools replay exactly.

use seedpod_protocol::ToolSpec;
use serde_json::Value;

use seedpod_protocol::InSmallPrompt;

use super::PromptMode;

/// The specs a segment in `mode` offers, from the specs of every enabled tool.
/// `keep_child_tools` is `ContextSettings::child_tools_in_compact`.
pub fn tools_for_mode(
    specs: &[ToolSpec],
    mode: PromptMode,
    keep_child_tools: bool,
) -> Vec<ToolSpec> {
    match mode {
        PromptMode::Full => specs.to_vec(),
        PromptMode::Small => {
            let kept: Vec<ToolSpec> = specs
                .iter()
                .filter(|spec| {
                    match crate::catalogue::decl_for(&spec.name).map(|decl| decl.in_small_prompt) {
                        Some(InSmallPrompt::Always) | None => true,
                        Some(InSmallPrompt::WhenConfigured) => keep_child_tools,
                        Some(InSmallPrompt::Never) => false,
                    }
                })
                .cloned()
                .collect();
            small_tool_specs(&kept)
        }
    }
}

/// `specs` shortened for a small window: each description cut to its first sentence, and every
/// `description` keyword dropped from the parameter schemas. Names, types, `required`, enums,
/// defaults and the rest are kept.
pub fn small_tool_specs(specs: &[ToolSpec]) -> Vec<ToolSpec> {
    specs
        .iter()
        .map(|spec| {
            let mut parameters = spec.parameters.clone();
            strip_descriptions(&mut parameters);
            ToolSpec {
                name: spec.name.clone(),
                description: first_sentence(&spec.description).to_string(),
                parameters,
            }
        })
        .collect()
}

/// Up to the end of the first sentence (`.`, `!` or `?` followed by white space or the end,
/// not the dot of `e.g.` or `i.e.`), or of the first paragraph when that comes first; trimmed.
pub(super) fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let paragraph_end = text.find("\n\n").unwrap_or(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if at >= paragraph_end {
            break;
        }
        let ends = matches!(c, '.' | '!' | '?')
            && chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        let end = at + c.len_utf8();
        if ends && !ABBREVIATIONS.iter().any(|a| text[..end].ends_with(a)) {
            return &text[..end];
        }
    }
    text[..paragraph_end].trim_end()
}

/// Dots that do not end a sentence.
const ABBREVIATIONS: [&str; 2] = ["e.g.", "i.e."];

/// The JSON-schema keywords whose values are schemas (one, a list, or a map of them), where a
/// `description` keyword may hide. Anything else is data: an object under `properties` is a map
/// from *parameter names* to schemas, so a parameter called `description` stays.
const SUBSCHEMA_MAPS: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];
const SUBSCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SUBSCHEMAS: [&str; 7] = [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
];

fn strip_descriptions(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    if matches!(object.get("description"), Some(Value::String(_))) {
        object.remove("description");
    }
    for key in SUBSCHEMA_MAPS {
        if let Some(Value::Object(map)) = object.get_mut(key) {
            map.values_mut().for_each(strip_descriptions);
        }
    }
    for key in SUBSCHEMA_LISTS {
        if let Some(Value::Array(list)) = object.get_mut(key) {
            list.iter_mut().for_each(strip_descriptions);
        }
    }
    for key in SUBSCHEMAS {
        match object.get_mut(key) {
            Some(Value::Array(list)) => list.iter_mut().for_each(strip_descriptions),
            Some(other) => strip_descriptions(other),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    #[test]
    fn the_first_sentence_ends_at_punctuation_before_space_or_end() {
        assert_eq!(
            first_sentence("Read a file. Lines are numbered."),
            "Read a file."
        );
        assert_eq!(
            first_sentence("Find `**/*.rs` files, e.g. sources. More."),
            "Find `**/*.rs` files, e.g. sources."
        );
        assert_eq!(
            first_sentence("  No full stop at all  "),
            "No full stop at all"
        );
        assert_eq!(first_sentence("Stop?\nNext line."), "Stop?");
        assert_eq!(first_sentence("Heading\n\nBody. More."), "Heading");
        assert_eq!(first_sentence("Ends with a dot."), "Ends with a dot.");
        assert_eq!(first_sentence("v1.2 is out. Yes."), "v1.2 is out.");
        assert_eq!(first_sentence(""), "");
        assert_eq!(first_sentence("Ünïcödé… works. Yes."), "Ünïcödé… works.");
    }

    #[test]
    fn compact_specs_drop_parameter_descriptions_but_keep_everything_else() {
        let full = spec(
            "edit",
            "Edit a file. Long explanation follows.",
            json!({
                "type": "object",
                "description": "The arguments.",
                "required": ["path", "description"],
                "additionalProperties": false,
                "properties": {
                    "path": {"type": "string", "description": "Which file."},
                    "description": {"type": "string", "description": "A parameter named description."},
                    "mode": {"enum": ["a", "b"], "default": "a", "description": "How."},
                    "edits": {
                        "type": "array",
                        "description": "Edits.",
                        "items": {
                            "type": "object",
                            "description": "One edit.",
                            "properties": {"old": {"type": "string", "description": "Old text.", "minLength": 1}}
                        }
                    },
                    "either": {"anyOf": [{"type": "string", "description": "s"}, {"type": "null"}]}
                },
                "$defs": {"Thing": {"type": "string", "description": "A thing."}}
            }),
        );
        let compact = small_tool_specs(std::slice::from_ref(&full));
        assert_eq!(compact.len(), 1);
        assert_eq!(compact[0].name, "edit");
        assert_eq!(compact[0].description, "Edit a file.");
        assert_eq!(
            compact[0].parameters,
            json!({
                "type": "object",
                "required": ["path", "description"],
                "additionalProperties": false,
                "properties": {
                    "path": {"type": "string"},
                    "description": {"type": "string"},
                    "mode": {"enum": ["a", "b"], "default": "a"},
                    "edits": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"old": {"type": "string", "minLength": 1}}
                        }
                    },
                    "either": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                },
                "$defs": {"Thing": {"type": "string"}}
            })
        );
        // Deterministic, and compacting twice changes nothing more.
        assert_eq!(compact, small_tool_specs(std::slice::from_ref(&full)));
        assert_eq!(small_tool_specs(&compact), compact);
    }

    #[test]
    fn compact_mode_leaves_the_child_tools_out_unless_kept_and_the_task_list_out() {
        let specs: Vec<ToolSpec> = [
            "read_file",
            "spawn_pod",
            "shell",
            "update_tasks",
            "stop_pod",
        ]
        .iter()
        .map(|name| spec(name, "Does it. More.", json!({})))
        .collect();
        let names =
            |specs: Vec<ToolSpec>| -> Vec<String> { specs.into_iter().map(|s| s.name).collect() };
        assert_eq!(
            names(tools_for_mode(&specs, PromptMode::Small, false)),
            ["read_file", "shell"]
        );
        assert_eq!(
            names(tools_for_mode(&specs, PromptMode::Small, true)),
            ["read_file", "spawn_pod", "shell", "stop_pod"],
            "the task list is left out of compact mode either way"
        );
        assert_eq!(tools_for_mode(&specs, PromptMode::Full, false), specs);
        assert!(
            tools_for_mode(&specs, PromptMode::Small, true)
                .iter()
                .all(|s| s.description == "Does it.")
        );
    }
}
