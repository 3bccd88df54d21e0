//! The TUI in a pseudo-terminal: the real `seedpod` binary drawing to a pty whose output is read
//! back through a VT100 parser, so tests type keys and wait for what a person would see.
//!
//! Waiting is event-driven: each chunk of output is fed to the parser as it arrives and the
//! screen is checked again; a bounded wait that fails prints the whole screen.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::{EVENT_TIMEOUT, TestHome, seedpod_bin};

/// Default screen size of a test terminal.
pub const ROWS: u16 = 32;
pub const COLS: u16 = 100;

/// Keys as a terminal sends them.
pub mod keys {
    pub const ENTER: &str = "\r";
    pub const ESC: &str = "\x1b";
    pub const CTRL_C: &str = "\x03";
    pub const CTRL_D: &str = "\x04";
    pub const CTRL_P: &str = "\x10";
    pub const CTRL_G: &str = "\x07";
    pub const CTRL_O: &str = "\x0f";
    pub const CTRL_T: &str = "\x14";
    pub const CTRL_F: &str = "\x06";
    pub const ALT_ENTER: &str = "\x1b\r";
    pub const PAGE_UP: &str = "\x1b[5~";
    pub const HOME: &str = "\x1b[H";
    pub const END: &str = "\x1b[F";
    pub const PAGE_DOWN: &str = "\x1b[6~";
    pub const DOWN: &str = "\x1b[B";
    pub const TAB: &str = "\t";
}

pub struct Tui {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: Receiver<Vec<u8>>,
    parser: vt100::Parser,
    /// The last bytes seen, so a terminal query split across two reads is still answered.
    tail: Vec<u8>,
    /// Every byte the app wrote, for sequences the screen does not show (notifications).
    raw: Vec<u8>,
    /// Keeps the pty open for the child's lifetime.
    _master: Box<dyn MasterPty + Send>,
    exited: bool,
}

impl Tui {
    /// `seedpod ARGS` in a `ROWS`×`COLS` terminal with the sandbox's home.
    pub fn spawn(sb: &TestHome, args: &[&str]) -> Tui {
        Tui::spawn_sized(sb, args, ROWS, COLS)
    }

    pub fn spawn_sized(sb: &TestHome, args: &[&str], rows: u16, cols: u16) -> Tui {
        Tui::spawn_with(sb, args, rows, cols, &[])
    }

    /// Like `spawn_sized`, with extra environment variables (`TERM_PROGRAM`, …).
    pub fn spawn_with(
        sb: &TestHome,
        args: &[&str],
        rows: u16,
        cols: u16,
        env: &[(&str, &str)],
    ) -> Tui {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(seedpod_bin());
        cmd.args(args);
        cmd.env("SEEDPOD_HOME", sb.path());
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("SEEDPOD_LOG");
        cmd.env_remove("NO_COLOR");
        cmd.env_remove("TERM_PROGRAM");
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd.cwd(sb.path());
        let child = pty
            .slave
            .spawn_command(cmd)
            .expect("spawn seedpod in the pty");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("pty reader");
        let writer = pty.master.take_writer().expect("pty writer");
        let (tx, output) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Tui {
            child,
            writer,
            output,
            parser: vt100::Parser::new(
                NonZeroU16::new(rows).expect("rows > 0"),
                NonZeroU16::new(cols).expect("cols > 0"),
                0,
            ),
            tail: Vec::new(),
            raw: Vec::new(),
            _master: pty.master,
            exited: false,
        }
    }

    /// The process id of the app in the terminal (to signal it as a closing terminal would).
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Type `keys` (text or escape sequences from `keys`).
    pub fn send(&mut self, keys: &str) {
        self.writer
            .write_all(keys.as_bytes())
            .and_then(|()| self.writer.flush())
            .expect("write to the pty");
    }

    /// A bracketed paste, as a terminal delivers one.
    pub fn paste(&mut self, text: &str) {
        self.send(&format!("\x1b[200~{text}\x1b[201~"));
    }

    /// The screen as text, one line per row.
    pub fn screen(&self) -> String {
        self.parser.screen().contents()
    }

    pub fn contains(&self, text: &str) -> bool {
        self.screen().contains(text)
    }

    fn feed(&mut self, chunk: &[u8]) {
        self.raw.extend_from_slice(chunk);
        self.parser.process(chunk);
        self.tail.extend_from_slice(chunk);
        self.answer_queries();
        let keep = self.tail.len().saturating_sub(16);
        self.tail.drain(..keep);
    }

    /// Answer what a real terminal answers: primary device attributes (crossterm asks while
    /// probing keyboard enhancement, and would otherwise wait two seconds) and the cursor
    /// position.
    fn answer_queries(&mut self) {
        let seen = |needle: &[u8], tail: &[u8]| tail.windows(needle.len()).any(|w| w == needle);
        if seen(b"\x1b[c", &self.tail) {
            self.tail.clear();
            self.send("\x1b[?62;22c");
        }
        if seen(b"\x1b[6n", &self.tail) {
            self.tail.clear();
            self.send("\x1b[1;1R");
        }
    }

    /// Read output until `ready` holds for the screen; panics after `EVENT_TIMEOUT` with the
    /// screen. Returns how long it took.
    pub fn wait_until(
        &mut self,
        what: &str,
        mut ready: impl FnMut(&vt100::Screen) -> bool,
    ) -> Duration {
        let start = Instant::now();
        let deadline = start + EVENT_TIMEOUT;
        loop {
            if ready(self.parser.screen()) {
                return start.elapsed();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!(
                    "timed out waiting for {what}; the screen:\n{}",
                    self.screen()
                );
            }
            match self.output.recv_timeout(left) {
                Ok(chunk) => self.feed(&chunk),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    if ready(self.parser.screen()) {
                        return start.elapsed();
                    }
                    panic!(
                        "the TUI exited while waiting for {what}; the screen:\n{}",
                        self.screen()
                    );
                }
            }
        }
    }

    /// Let `pause` pass, reading what the app draws meanwhile: the rhythm of a person typing
    /// (the time between the keys a test sends), never a wait for an outcome — use `wait_until`
    /// for that.
    pub fn pause(&mut self, pause: Duration) {
        let until = Instant::now() + pause;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            match self.output.recv_timeout(left) {
                Ok(chunk) => self.feed(&chunk),
                // Nothing more to read: the app has exited (a later wait says so).
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// Wait until the app has written `bytes` (anywhere in its output so far).
    pub fn wait_for_output(&mut self, bytes: &[u8]) {
        self.wait_for_count(bytes, 1);
    }

    /// How many times the app has written `bytes` so far.
    pub fn count(&self, bytes: &[u8]) -> usize {
        self.raw
            .windows(bytes.len())
            .filter(|w| *w == bytes)
            .count()
    }

    /// Wait until the app has written `bytes` at least `times` times.
    pub fn wait_for_count(&mut self, bytes: &[u8], times: usize) {
        let start = Instant::now();
        while self.count(bytes) < times {
            let left = (start + EVENT_TIMEOUT).saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(chunk) => self.feed(&chunk),
                Err(_) => panic!(
                    "timed out waiting for the app to write {:?}",
                    String::from_utf8_lossy(bytes)
                ),
            }
        }
    }

    /// Whether the app has written `bytes` so far.
    pub fn wrote(&self, bytes: &[u8]) -> bool {
        self.raw.windows(bytes.len()).any(|w| w == bytes)
    }

    /// Wait until `text` is on the screen.
    pub fn wait_for(&mut self, text: &str) -> Duration {
        self.wait_until(&format!("{text:?} on the screen"), |screen| {
            screen.contents().contains(text)
        })
    }

    /// Wait for the process to end (its side of the pty closes), reading its last output;
    /// returns whether it exited 0.
    pub fn wait_exit(&mut self) -> bool {
        let deadline = Instant::now() + EVENT_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(chunk) => self.feed(&chunk),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("the TUI did not exit; the screen:\n{}", self.screen())
                }
            }
        }
        self.exited = true;
        self.child.wait().expect("wait for the TUI").success()
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        if !self.exited {
            let _ = self.child.kill();
        }
    }
}
