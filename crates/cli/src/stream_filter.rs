//! What `send` prints while an answer streams. Reasoning models (Qwen3, DeepSeek-R1, QwQ)
//! stream their reasoning first, inside `<think>…</think>`; the pod moves it out of the answer
//! when it commits, but `send` prints deltas as they come. This holds back a leading reasoning
//! block so a script reading stdout gets the answer, not the model's scratch work. Whatever is
//! held back and never resolved is printed from the committed (cleaned) text instead.

/// Reasoning tags a model may open its answer with, lower case.
const OPENERS: [&str; 4] = ["think", "thinking", "thought", "antthinking"];

#[derive(Debug, Default)]
pub struct ThinkFilter {
    state: State,
    held: String,
}

#[derive(Debug, Default)]
enum State {
    /// Nothing printable yet: the text so far could still be the start of an opening tag.
    #[default]
    Start,
    /// Inside a leading reasoning block, waiting for its closing tag.
    Reasoning { close: String },
    /// Past any leading block: everything passes.
    Pass,
}

impl ThinkFilter {
    /// Feed one delta; returns what may be printed now.
    pub fn push(&mut self, delta: &str) -> String {
        match &self.state {
            State::Pass => delta.to_string(),
            State::Start => {
                self.held.push_str(delta);
                self.after_start()
            }
            State::Reasoning { .. } => {
                self.held.push_str(delta);
                self.after_reasoning()
            }
        }
    }

    /// A new response begins.
    pub fn reset(&mut self) {
        *self = ThinkFilter::default();
    }

    fn after_start(&mut self) -> String {
        let text = self.held.trim_start();
        if text.is_empty() {
            return String::new();
        }
        let lower = text.to_ascii_lowercase();
        for name in OPENERS {
            let open = format!("<{name}>");
            if lower.starts_with(&open) {
                let rest = text[open.len()..].to_string();
                self.state = State::Reasoning {
                    close: format!("</{name}>"),
                };
                self.held = rest;
                return self.after_reasoning();
            }
        }
        if OPENERS
            .iter()
            .any(|name| format!("<{name}>").starts_with(&lower))
        {
            // "<thi": could still become a tag.
            return String::new();
        }
        self.state = State::Pass;
        std::mem::take(&mut self.held)
    }

    fn after_reasoning(&mut self) -> String {
        let State::Reasoning { close } = &self.state else {
            return String::new();
        };
        let lower = self.held.to_ascii_lowercase();
        match lower.find(close.as_str()) {
            Some(at) => {
                let rest = self.held[at + close.len()..].trim_start().to_string();
                self.held.clear();
                self.state = State::Pass;
                rest
            }
            None => {
                // Keep only what could be the start of the closing tag.
                let keep = close.len().saturating_sub(1);
                let mut cut = self.held.len().saturating_sub(keep);
                while !self.held.is_char_boundary(cut) {
                    cut -= 1;
                }
                self.held.drain(..cut);
                String::new()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(deltas: &[&str]) -> String {
        let mut filter = ThinkFilter::default();
        deltas.iter().map(|d| filter.push(d)).collect()
    }

    #[test]
    fn a_leading_think_block_is_held_back_in_any_chunking() {
        assert_eq!(run(&["<think>plan</think>Hello"]), "Hello");
        assert_eq!(
            run(&["<", "th", "ink>pl", "an</thi", "nk>\n\nHel", "lo"]),
            "Hello"
        );
        assert_eq!(run(&["  <THINKING>x</THINKING> ok"]), "ok");
    }

    #[test]
    fn ordinary_text_passes_at_once() {
        assert_eq!(run(&["Hello"]), "Hello");
        let mut filter = ThinkFilter::default();
        assert_eq!(filter.push("<b>bold"), "<b>bold");
        assert_eq!(
            filter.push(" <think>later</think>"),
            " <think>later</think>"
        );
    }

    #[test]
    fn an_unclosed_block_prints_nothing_and_holds_little() {
        let mut filter = ThinkFilter::default();
        assert_eq!(filter.push("<think>"), "");
        for _ in 0..1000 {
            assert_eq!(filter.push("thinking hard é "), "");
        }
        assert!(filter.held.len() < 16, "{}", filter.held.len());
    }
}
