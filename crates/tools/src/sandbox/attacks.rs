//! The attacks the sandbox stops, each a real command through the real shell tool: reaching a
//! Unix socket (a pod's, or any other program's the person runs), outliving the call (double
//! forks, `setsid`), writing a protected file late or in place, pointing git elsewhere with
//! `commondir`, the network through TCP Fast Open, MPTCP and UDP with it off, the person's
//! terminals, seedpod's own directories, and the pod's memory and environment.
//!
//! The clients are perl one-liners: perl is part of every Debian-like base system, and a script
//! is what a model would write.

use std::fs;
use std::io::Read;
use std::os::unix::net::{UnixDatagram, UnixListener};

use seedpod_engine::Tool;

use super::tests::{fixture, landlock, run, shell};

/// A marker no other process on the machine has in its command line.
fn marker() -> String {
    format!(
        "{}.{}",
        3000 + std::process::id() % 1000,
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    )
}

/// Processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) {
            found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

const UNIX_CLIENT: &str = r#"perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\n"; connect($s, pack_sockaddr_un($ARGV[0])) or die "connect: $!\n"; syswrite($s, "{\"type\":\"approve\"}\n"); print "connected\n"'"#;

#[tokio::test]
async fn no_unix_socket_can_be_reached_from_the_sandbox() {
    if !landlock() {
        return;
    }
    let f = fixture();
    // A socket like a pod's: in a directory of its own, reachable by path.
    let path = f.outside.join("pod.sock");
    let listener = UnixListener::bind(&path).expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let dgram_path = f.outside.join("journal.sock");
    let dgram = UnixDatagram::bind(&dgram_path).expect("bind");
    dgram.set_nonblocking(true).expect("nonblocking");

    for network in [true, false] {
        let shell = shell(&f.project, network);
        let stream = run(&shell, &format!("{UNIX_CLIENT} '{}'", path.display())).await;
        assert!(
            !stream.contains("connected") && stream.contains("socket: Permission denied"),
            "network {network}: {stream}"
        );
        // A datagram pair can name a socket on disk in `sendto`; it is refused too.
        let pair = run(
            &shell,
            &format!(
                r#"perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) or die "pair: $!\n"; send($a, "x", 0, pack_sockaddr_un($ARGV[0])) or die "send: $!\n"; print "sent\n"' '{}'"#,
                dgram_path.display()
            ),
        )
        .await;
        assert!(
            !pair.contains("sent") && pair.contains("pair: Permission denied"),
            "{pair}"
        );
        // A stream pair (what pipelines of programs use) still works.
        let stream_pair = run(
            &shell,
            r#"perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "pair: $!\n"; print "paired\n"'"#,
        )
        .await;
        assert!(stream_pair.contains("paired"), "{stream_pair}");
    }
    assert!(
        listener.accept().is_err(),
        "a sandboxed command reached the socket"
    );
    let mut buf = [0u8; 8];
    assert!(dgram.recv(&mut buf).is_err(), "a datagram arrived");
}

#[tokio::test]
async fn nothing_the_command_starts_outlives_the_call() {
    if !landlock() {
        return;
    }
    let f = fixture();
    let shell = shell(&f.project, true);
    let (a, b, c) = (marker(), marker() + "1", marker() + "2");
    let output = run(
        &shell,
        &format!(
            "sleep {a} & setsid sleep {b} & (nohup sh -c 'sleep {c}' >/dev/null 2>&1 &) ; \
             sleep 0.2; echo started"
        ),
    )
    .await;
    assert!(output.contains("started"), "{output}");
    for needle in [&a, &b, &c] {
        assert_eq!(
            processes_with(&format!("sleep {needle}")),
            Vec::<String>::new(),
            "alive after the call"
        );
    }

    // A timeout kills the namespace too.
    let d = marker() + "3";
    let output = shell
        .call(
            serde_json::json!({
                "command": format!("setsid sleep {d} & sleep 30"),
                "timeout_secs": 1
            })
            .to_string(),
        )
        .await;
    assert!(output.content.contains("timed out"), "{}", output.content);
    assert!(processes_with(&format!("sleep {d}")).is_empty());
}

#[tokio::test]
async fn protected_files_are_read_only_and_created_ones_are_removed() {
    if !landlock() {
        return;
    }
    let f = fixture();
    let git = f.project.join(".git");
    fs::create_dir_all(git.join("hooks")).expect("hooks");
    let config = "[core]\n\tbare = false\n";
    fs::write(git.join("config"), config).expect("config");
    fs::write(f.project.join(".gitattributes"), "*.txt text\n").expect("attributes");
    let shell = shell(&f.project, true);

    // In place, same size, by rename, late from a background process: all fail.
    let attacks = [
        "printf '[core]\\n\\tbare = fals3\\n' > .git/config",
        "echo '[core] fsmonitor = touch PWNED' >> .git/config",
        "cp .git/config /tmp/x 2>/dev/null; echo x > $TMPDIR/c && mv $TMPDIR/c .git/config",
        "echo '#!/bin/sh' > .git/hooks/pre-commit",
        "echo '* filter=evil' > .gitattributes",
        "(sleep 0.3; echo late >> .git/config) & setsid sh -c 'sleep 0.3; echo late >> .git/config' &",
    ];
    for attack in attacks {
        let output = run(&shell, attack).await;
        assert_eq!(
            fs::read_to_string(git.join("config")).expect("config"),
            config,
            "{attack}: {output}"
        );
    }
    assert!(!git.join("hooks/pre-commit").exists());
    assert_eq!(
        fs::read_to_string(f.project.join(".gitattributes")).expect("attributes"),
        "*.txt text\n"
    );
    let denied = run(&shell, "echo x >> .git/config").await;
    assert!(denied.contains("Read-only file system"), "{denied}");

    // `commondir` does not exist, so nothing covers it: created, it is removed again.
    let planted = run(
        &shell,
        "mkdir -p $TMPDIR/evil && echo $TMPDIR/evil > .git/commondir && echo planted",
    )
    .await;
    assert!(planted.contains("planted"), "{planted}");
    assert!(!git.join("commondir").exists(), "commondir stayed");
    assert!(planted.contains(super::watch::REVERTED_NOTE), "{planted}");

    // Ordinary work in the repository still goes on.
    let work = run(
        &shell,
        "echo x > .git/index.lock && rm .git/index.lock && echo ok",
    )
    .await;
    assert!(work.contains("ok"), "{work}");
}

#[tokio::test]
async fn with_the_network_off_no_send_path_leaves() {
    if !landlock() {
        return;
    }
    let f = fixture();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("tcp");
    tcp.set_nonblocking(true).expect("nonblocking");
    let port = tcp.local_addr().expect("addr").port();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
    udp.set_nonblocking(true).expect("nonblocking");
    let udp_port = udp.local_addr().expect("addr").port();
    let shell = shell(&f.project, false);
    let attempts = [
        // TCP Fast Open: the data goes out with the SYN, without connect(2).
        format!(
            r#"perl -MSocket -e 'socket(my $s, AF_INET, SOCK_STREAM, 0) or die "socket: $!\n"; send($s, "x", 0x20000000, pack_sockaddr_in({port}, inet_aton("127.0.0.1"))) or die "send: $!\n"; print "sent\n"'"#
        ),
        // MPTCP (protocol 262).
        format!(
            r#"perl -MSocket -e 'socket(my $s, AF_INET, SOCK_STREAM, 262) or die "socket: $!\n"; connect($s, pack_sockaddr_in({port}, inet_aton("127.0.0.1"))) or die "connect: $!\n"; print "sent\n"'"#
        ),
        format!(
            r#"perl -MSocket -e 'socket(my $s, AF_INET, SOCK_DGRAM, 0) or die "socket: $!\n"; send($s, "x", 0, pack_sockaddr_in({udp_port}, inet_aton("127.0.0.1"))) or die "send: $!\n"; print "sent\n"'"#
        ),
        r#"perl -MSocket -e 'socket(my $s, 17, 3, 0x300) or die "socket: $!\n"; print "sent\n"'"#
            .to_string(),
    ];
    for attempt in &attempts {
        let output = run(&shell, attempt).await;
        assert!(!output.contains("sent"), "{attempt}: {output}");
    }
    assert!(tcp.accept().is_err(), "a TCP connection arrived");
    let mut buf = [0u8; 8];
    assert!(udp.recv(&mut buf).is_err(), "a datagram arrived");
}

#[tokio::test]
async fn terminals_the_pods_memory_and_seedpods_directories_are_out_of_reach() {
    if !landlock() {
        return;
    }
    let f = fixture();
    // A terminal of the person's: the sandbox may neither write to it nor read from it.
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname on a descriptor we own.
    let pts = unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "openpt");
        libc::grantpt(master);
        libc::unlockpt(master);
        std::ffi::CStr::from_ptr(libc::ptsname(master))
            .to_string_lossy()
            .into_owned()
    };
    let shell_on = shell(&f.project, true);
    let terminal = run(
        &shell_on,
        &format!("echo FAKE PROMPT > {pts}; cat {pts} & sleep 0.1; ls /dev/pts"),
    )
    .await;
    assert!(
        terminal.contains("Permission denied") && !terminal.contains("ptmx"),
        "{terminal}"
    );

    // The pod's environment and memory (here: this test process, which plays the pod).
    let pid = std::process::id();
    let memory = run(
        &shell_on,
        &format!("cat /proc/{pid}/environ; head -c 16 /proc/{pid}/mem; ls /proc/{pid}/fd"),
    )
    .await;
    assert!(memory.contains("Permission denied"), "{memory}");
    assert!(
        !memory.contains("PATH="),
        "the environment was read: {memory}"
    );

    // seedpod's directories, covered even under a readable root.
    let home = f.project.join("readable/seedpod-run");
    fs::create_dir_all(&home).expect("home");
    fs::write(home.join("token"), "SECRET-TOKEN").expect("token");
    let scope = crate::scope::Scope::new(
        &f.project,
        &crate::scope::ScopeRules {
            write: vec![".".into()],
            ..Default::default()
        },
    )
    .expect("scope");
    let sandbox = super::Sandbox::new(std::sync::Arc::new(scope), true, None)
        .expect("sandbox")
        .hiding(vec![home.clone(), f.project.clone()]);
    let hidden_shell = crate::shell::Shell::new(
        f.project.clone(),
        crate::shell::ShellLimits::default(),
        Some(sandbox),
    );
    let look = run(
        &hidden_shell,
        &format!(
            "ls -a {}; cat {}/token; echo end",
            home.display(),
            home.display()
        ),
    )
    .await;
    assert!(
        !look.contains("SECRET-TOKEN") && !look.contains("token\n"),
        "{look}"
    );
    assert!(look.contains("end"), "{look}");
    let mut token = String::new();
    fs::File::open(home.join("token"))
        .and_then(|mut file| file.read_to_string(&mut token))
        .expect("still there outside");
    assert_eq!(token, "SECRET-TOKEN");
}
