//! Fenced code blocks are the model's content, whatever they contain: the cleaning steps run
//! on the prose between them only.

/// Apply `step` to each run of lines outside fenced code blocks (``` or ~~~), leaving the
/// blocks byte for byte. An unclosed fence protects everything after it.
pub fn map_prose(text: &str, mut step: impl FnMut(&str) -> String) -> String {
    // A fence must stay at the start of its line, whatever the step removed before it.
    let mut step = |prose: &str| {
        let mut cleaned = step(prose);
        if prose.ends_with('\n') && !cleaned.is_empty() && !cleaned.ends_with('\n') {
            cleaned.push('\n');
        }
        cleaned
    };
    let mut out = String::with_capacity(text.len());
    let mut prose = String::new();
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let marker = line.trim_start();
        match fence {
            Some(open) => {
                out.push_str(line);
                if marker.trim_end().starts_with(open)
                    && marker.trim_end().len() >= open.len()
                    && marker.trim_end().chars().all(|c| open.starts_with(c))
                {
                    fence = None;
                }
            }
            None => {
                let opener = ["```", "~~~"].into_iter().find(|m| marker.starts_with(m));
                match opener {
                    Some(open) => {
                        out.push_str(&step(&prose));
                        prose.clear();
                        out.push_str(line);
                        fence = Some(open);
                    }
                    None => prose.push_str(line),
                }
            }
        }
    }
    out.push_str(&step(&prose));
    out
}
