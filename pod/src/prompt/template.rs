//! Templating of the prompt layers people write (identity, session and custom instructions)
//! with `minijinja`, strictly: a variable that does not exist is an error, never an empty string.

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, ErrorKind, UndefinedBehavior, context};

use super::{LayerKind, PromptError, PromptInputs};

/// The variables a template may use, sorted (as error messages list them).
pub const VARIABLES: [&str; 5] = ["current_date", "cwd", "model", "pod_name", "tools"];

/// The values of `VARIABLES` for one rendering.
pub(super) fn variables(inputs: &PromptInputs) -> Value {
    let tools: Vec<String> = inputs.tools.iter().map(|tool| tool.name.clone()).collect();
    context! {
        current_date => inputs.current_date.as_str(),
        cwd => inputs.cwd.display().to_string(),
        model => inputs.model.as_str(),
        pod_name => inputs.pod_name.as_str(),
        tools => tools,
    }
}

/// Render `source` for `layer`. `origin` (the layer's source) and `name` (a short name for line
/// references) go into errors so the person knows which file to fix.
pub(super) fn render(
    layer: LayerKind,
    origin: &str,
    name: &str,
    source: &str,
    vars: &Value,
) -> Result<String, PromptError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Prompts are plain text: never HTML-escape, whatever the file is called.
    env.set_auto_escape_callback(|_| AutoEscape::None);
    let fail = |message: String| PromptError::Template {
        layer: layer.label(),
        origin: origin.to_string(),
        message,
    };
    let template = env
        .template_from_named_str(name, source)
        .map_err(|err| fail(err.to_string()))?;
    template.render(vars).map_err(|err| {
        if err.kind() != ErrorKind::UndefinedError {
            return fail(err.to_string());
        }
        // minijinja does not say which name was undefined; the template can.
        let mut unknown: Vec<String> = template
            .undeclared_variables(false)
            .into_iter()
            .filter(|var| !VARIABLES.contains(&var.as_str()))
            .filter(|var| env.globals().all(|(global, _)| global != var.as_str()))
            .collect();
        unknown.sort();
        let line = err
            .line()
            .map(|l| format!(" on line {l}"))
            .unwrap_or_default();
        let names = if unknown.is_empty() {
            "an undefined value".to_string()
        } else {
            let names: Vec<String> = unknown.iter().map(|name| format!("`{name}`")).collect();
            format!("undefined variable {}", names.join(", "))
        };
        fail(format!(
            "{names}{line}; available variables: {}",
            VARIABLES.join(", ")
        ))
    })
}
