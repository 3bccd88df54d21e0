//! Taking over the terminal and giving it back, whatever happens.
//!
//! Entering: raw mode, the alternate screen, bracketed paste (so a paste arrives as one event
//! and can become a chip), and the kitty keyboard protocol's "disambiguate" flag where the
//! terminal supports it (so Shift-Enter is distinguishable from Enter).
//!
//! Mouse: not captured by default. Capturing the mouse would take drags away from the
//! terminal's own text selection, and copying text out of a transcript matters more than the
//! wheel; `/mouse` turns on button+wheel reporting (no drag or motion reporting) for people who
//! prefer the wheel, and Shift-drag still selects in most terminals then.
//!
//! Restoring runs on normal exit, on error (the guard's `Drop`) and on panic (a hook installed
//! before anything changes), so the shell is never left in raw mode.

use std::io::{self, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode, supports_keyboard_enhancement,
};
use crossterm::{cursor, execute, queue};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Whether keyboard enhancement flags were pushed (they must be popped exactly once).
static KEYBOARD_PUSHED: AtomicBool = AtomicBool::new(false);
/// Whether mouse reporting is on.
static MOUSE_ON: AtomicBool = AtomicBool::new(false);
/// Whether the terminal is ours right now.
static ENTERED: AtomicBool = AtomicBool::new(false);

/// Button press/release and wheel reporting in SGR encoding: xterm modes 1000 and 1006. Not
/// 1002/1003 (drag and motion), which crossterm's `EnableMouseCapture` also turns on.
const MOUSE_ON_SEQ: &str = "\x1b[?1000h\x1b[?1006h";
const MOUSE_OFF_SEQ: &str = "\x1b[?1006l\x1b[?1000l";

/// Restores the terminal when dropped.
pub struct TerminalGuard(());

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Take over the terminal. Keep the guard alive for as long as the app runs.
pub fn enter() -> io::Result<(Term, TerminalGuard)> {
    install_panic_hook();
    enable_raw_mode()?;
    ENTERED.store(true, Ordering::SeqCst);
    let guard = TerminalGuard(());
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableFocusChange,
        cursor::Hide
    )?;
    // Asks the terminal; one that does not answer costs a short wait, once.
    if matches!(supports_keyboard_enhancement(), Ok(true)) {
        execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        KEYBOARD_PUSHED.store(true, Ordering::SeqCst);
    }
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    Ok((terminal, guard))
}

/// Give the terminal back. Safe to call more than once and from the panic hook.
pub fn restore() {
    if !ENTERED.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if MOUSE_ON.swap(false, Ordering::SeqCst) {
        let _ = out.write_all(MOUSE_OFF_SEQ.as_bytes());
    }
    if KEYBOARD_PUSHED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        EndSynchronizedUpdate,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // Restore first, so the panic message lands on a usable terminal.
        restore();
        previous(info);
    }));
}

/// Turn mouse reporting on or off.
pub fn set_mouse(on: bool) -> io::Result<()> {
    let was = MOUSE_ON.swap(on, Ordering::SeqCst);
    if was == on {
        return Ok(());
    }
    let mut out = io::stdout();
    out.write_all(if on { MOUSE_ON_SEQ } else { MOUSE_OFF_SEQ }.as_bytes())?;
    out.flush()
}

/// Draw one frame inside a synchronized update, so the terminal shows it all at once (no
/// flicker or half-drawn frames while text streams).
pub fn draw(terminal: &mut Term, render: impl FnOnce(&mut ratatui::Frame)) -> io::Result<()> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    terminal.draw(render)?;
    execute!(terminal.backend_mut(), EndSynchronizedUpdate)
}

/// Write raw bytes to the terminal (OSC 52 clipboard).
pub fn write_raw(terminal: &mut Term, bytes: &str) -> io::Result<()> {
    let backend = terminal.backend_mut();
    backend.write_all(bytes.as_bytes())?;
    backend.flush()
}
