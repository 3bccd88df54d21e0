//! Getting a person's attention when a turn ends or an approval waits and the terminal is not
//! focused (focus events tell the app): a desktop notification where the terminal is known to
//! show one, else the bell, as the best agent TUIs do.
//!
//! OSC 9 (`ESC ] 9 ; text BEL`) is iTerm2's, also shown by WezTerm, Ghostty, kitty and
//! Windows Terminal; OSC 777 (`ESC ] 777 ; notify ; title ; body BEL`) is urxvt's, shown by foot
//! and Konsole. A terminal that knows neither ignores the sequence silently, so the choice is
//! made from what the environment says the terminal is, and anything unknown gets the bell
//! (which tmux and screen pass on as an alert).

/// `[tui] notify`, as the TUI takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifyMode {
    #[default]
    Auto,
    Bell,
    Off,
}

/// How one notification is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    Osc9,
    Osc777,
    Bell,
}

/// The channel for `mode` in a terminal described by `TERM` and `TERM_PROGRAM`; `None`: off.
pub fn channel(mode: NotifyMode, term: &str, term_program: &str) -> Option<Channel> {
    match mode {
        NotifyMode::Off => None,
        NotifyMode::Bell => Some(Channel::Bell),
        NotifyMode::Auto => {
            let program = term_program.to_ascii_lowercase();
            let term = term.to_ascii_lowercase();
            // Inside tmux or screen an OSC goes nowhere unless passthrough is configured.
            if term.starts_with("tmux") || term.starts_with("screen") {
                return Some(Channel::Bell);
            }
            if ["iterm.app", "wezterm", "ghostty"].contains(&program.as_str())
                || term.contains("kitty")
                || term.contains("ghostty")
            {
                Some(Channel::Osc9)
            } else if term.starts_with("foot") || term.contains("rxvt") || program == "konsole" {
                Some(Channel::Osc777)
            } else {
                Some(Channel::Bell)
            }
        }
    }
}

/// The bytes that send `body` (with `title` where the channel has one). Control characters
/// and the separators of the sequence are replaced, so nothing a pod says can end the
/// sequence early or become one of its own.
pub fn sequence(channel: Channel, title: &str, body: &str) -> String {
    let clean = |text: &str, max: usize| -> String {
        text.chars()
            .map(|c| if c.is_control() || c == ';' { ' ' } else { c })
            .take(max)
            .collect()
    };
    match channel {
        Channel::Osc9 => format!("\x1b]9;{}: {}\x07", clean(title, 60), clean(body, 200)),
        Channel::Osc777 => format!(
            "\x1b]777;notify;{};{}\x07",
            clean(title, 60),
            clean(body, 200)
        ),
        Channel::Bell => "\x07".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_follows_the_terminal() {
        let auto = NotifyMode::Auto;
        assert_eq!(
            channel(auto, "xterm-256color", "WezTerm"),
            Some(Channel::Osc9)
        );
        assert_eq!(
            channel(auto, "xterm-256color", "iTerm.app"),
            Some(Channel::Osc9)
        );
        assert_eq!(channel(auto, "xterm-kitty", ""), Some(Channel::Osc9));
        assert_eq!(channel(auto, "foot", ""), Some(Channel::Osc777));
        assert_eq!(channel(auto, "xterm-256color", ""), Some(Channel::Bell));
        assert_eq!(
            channel(auto, "tmux-256color", "WezTerm"),
            Some(Channel::Bell)
        );
        assert_eq!(
            channel(NotifyMode::Bell, "foot", "WezTerm"),
            Some(Channel::Bell)
        );
        assert_eq!(channel(NotifyMode::Off, "foot", "WezTerm"), None);
    }

    #[test]
    fn a_pod_cannot_end_the_sequence_or_start_another() {
        let seq = sequence(Channel::Osc777, "pod;x", "done\x07\x1b]52;c;AAAA\x07; rm");
        assert_eq!(seq.matches('\x07').count(), 1, "{seq:?}");
        assert_eq!(seq.matches('\x1b').count(), 1, "{seq:?}");
        assert!(seq.starts_with("\x1b]777;notify;pod x;done"), "{seq:?}");
        assert_eq!(
            sequence(Channel::Osc9, "p", "turn done"),
            "\x1b]9;p: turn done\x07"
        );
        assert_eq!(sequence(Channel::Bell, "p", "x"), "\x07");
    }
}
