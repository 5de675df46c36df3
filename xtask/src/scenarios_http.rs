//! The sockets and HTTP scenarios (issues 13 and 14): the libOS's sockets
//! API echoing TCP and UDP for the host, and `httpd` serving the host's
//! requests — the samples, keep-alive, HEAD, 304, errors, and the
//! robustness attacks (`hosthttp.rs`). `scenarios.rs` lists them with the
//! others.

use crate::hosthttp;
use crate::hostnet;
use crate::hostnet::NetSpec;
use crate::scenario::Scenario;

/// Every scenario of this file, in the order `scenarios.rs` lists them.
pub(crate) const HTTP_SCENARIOS: [Scenario; 6] = [SOCKECHO, GET, ROBUST, LINUX, STEAL, EPOLL];

const SOCKECHO: Scenario = Scenario {
    name: "net-sockecho",
    about: "the libOS's sockets API (non-blocking sockets, one poll over a listener, a UDP socket and the connections): \
            the host's 21 UDP datagrams and 3 TCP connections (12 B, 20 kB, 200 kB) echoed byte for byte, and a \
            blocking connect from the guest to a host listener (greeting sent, reply read); nothing leaks",
    cmdline: "run=sockecho",
    expect: &[
        "sockecho: listening on 10.0.2.15:7 (tcp, udp)",
        "sockecho: connected to 10.0.2.2:*, 15 bytes back",
        "sockecho: 4 connections, 220016 bytes echoed, * datagrams echoed, quit",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:"],
    timeout_secs: 240,
    net: Some(NetSpec { tap: false, udp: &[7], tcp: &[7], host: Some(hosthttp::sock_echo_and_connect) }),
    ..Scenario::DEFAULT
};

const GET: Scenario = Scenario {
    name: "http-get",
    about: "httpd on the sockets API: the host GETs the 1 KB, 10 KB and 100 KB samples over HTTP/1.0 and keep-alive \
            (every byte, Content-Length, Content-Type checked), HEAD, pipelining, 304 for If-Modified-Since, 404, 405; \
            access log lines; the server exits when idle and nothing leaks",
    cmdline: "run=httpd+--samples+--exit-idle+6",
    expect: &[
        "httpd: serving /www on 10.0.2.15:80",
        "httpd: 10.0.2.2:* \"GET /1k.txt\" 200 1024",
        "httpd: 10.0.2.2:* \"GET /100k.bin\" 200 102400",
        "httpd: 10.0.2.2:* \"HEAD /10k.txt\" 200 0",
        "httpd: 10.0.2.2:* \"GET /10k.txt\" 304 0",
        "httpd: 10.0.2.2:* \"GET /missing.txt\" 404 *",
        "httpd: exit: * connections, 0 refused, * responses 200x* 304x1 404x1 405x1",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:"],
    timeout_secs: 240,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[80], host: Some(hosthttp::http_get) }),
    ..Scenario::DEFAULT
};

const ROBUST: Scenario = Scenario {
    name: "http-robust",
    about: "httpd under attack: garbage, overlong request line and headers, bare LF, invalid methods, /../ traversal \
            (three spellings), an oversized body, HTTP/2.0 each get their status and a close; a slow client, 200 idle \
            connections, 5 resets mid-response and a flood of 200 requests, with normal GETs served throughout; \
            the server exits and nothing leaks",
    cmdline: "run=httpd+-q+--samples+--exit-idle+6",
    expect: &[
        "httpd: serving /www on 10.0.2.15:80",
        "httpd: exit: * connections, * responses 200x* 400x6 405x1 413x1 414x1 431x1 505x1*",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:", "httpd: accept:"],
    timeout_secs: 420,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[80], host: Some(hosthttp::http_robust) }),
    ..Scenario::DEFAULT
};

const LINUX: Scenario = Scenario {
    name: "linux-sockets",
    about: "a static musl program echoes the host's UDP datagrams (recvmsg/sendmsg) and TCP streams (accept4, read, \
            write; the second connection corked with TCP_CORK and MSG_MORE) through the Linux personality's socket calls, \
            waiting with poll and select in turn (select with a zero timeout sees nothing ready), non-blocking accept \
            and recv, MSG_MORE on UDP refused, \
            getsockname/getpeername, socket options, a refused connect and a refused second bind; nothing leaks",
    cmdline: "run=init",
    input: "linux lx-sockets\necho status $?\nexit 0\n",
    expect: &[
        "ok bind",
        "ok getsockname",
        "ok bind-twice-refused",
        "ok accept-nonblocking-eagain",
        "ok udp-msg-more-refused",
        "ok connect-refused",
        "ok select-nothing-ready",
        "lx-sockets: echoing on port 7",
        "ok accept4-peer",
        "ok getpeername",
        "ok tcp-cork",
        "ok select-served",
        "lx-sockets: 4 connections, 220016 bytes echoed, * datagrams echoed*",
        "lx-sockets: * checks, 0 failed",
        "status 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "unknown system call"],
    timeout_secs: 300,
    net: Some(NetSpec { tap: false, udp: &[7], tcp: &[7], host: Some(hosthttp::sock_echo) }),
    ..Scenario::DEFAULT
};

const EPOLL: Scenario = Scenario {
    name: "linux-epoll",
    about: "epoll through the Linux personality (lx-epoll, to Linux semantics): over pipes readable, writable, hang-up, \
            error, level-triggered repeats, MOD, DEL, ONESHOT, timeouts 0 and 50 ms, a watch leaving with its object's \
            last descriptor, 12 pipes with maxevents taking turns, 210 watch pairs of which the instance holds 128 (ENOSPC after), EINTR by SIGALRM, epoll_pwait's mask in a fork \
            child that inherited the instance, EBADF/EINVAL/EEXIST/ENOENT/EPERM/EFAULT; then a TCP echo server driven \
            only by epoll_wait echoes the host's 3 connections (12 B, 20 kB, 200 kB) and a quit; nothing leaks",
    cmdline: "run=init",
    input: "lx-epoll\necho status $?\nexit 0\n",
    expect: &[
        "ok readable",
        "ok oneshot-disabled",
        "ok hangup",
        "ok last-close-removes",
        "ok regular-file-eperm",
        "ok wait-efault",
        "ok eintr",
        "ok fork-inherits-and-pwait-eintr",
        "ok maxevents-takes-turns",
        "ok many-watches-all-report",
        "lx-epoll: 128 watches, 82 refused with ENOSPC",
        "lx-epoll: echoing on port 7",
        "ok listener-readable-accepts",
        "ok connection-readable-has-data",
        "lx-epoll: 4 connections, 220016 bytes echoed",
        "lx-epoll: * checks, 0 failed",
        "status 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "unknown system call"],
    timeout_secs: 300,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[7], host: Some(hostnet::tcp_echo) }),
    ..Scenario::DEFAULT
};

const STEAL: Scenario = Scenario {
    name: "net-sockets-steal",
    about: "two programs start together and both try to take port 7: the kernel's filter check refuses the second \
            (`listen: address in use`); the first serves the host's datagrams, streams and connect-back (taking the \
            ARP filter once the loser has gone) and nothing leaks",
    cmdline: "run=sockecho&sockecho",
    expect: &[
        "sockecho: listen: address in use",
        "sockecho: connected to 10.0.2.2:*, 15 bytes back",
        "sockecho: 4 connections, 220016 bytes echoed, * datagrams echoed, quit",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:"],
    timeout_secs: 240,
    net: Some(NetSpec { tap: false, udp: &[7], tcp: &[7], host: Some(hosthttp::sock_echo_and_connect) }),
    ..Scenario::DEFAULT
};

#[cfg(test)]
mod tests {
    use super::HTTP_SCENARIOS;
    use crate::scenarios::SCENARIOS;

    #[test]
    fn all_listed() {
        for s in HTTP_SCENARIOS {
            assert_eq!(SCENARIOS.iter().filter(|t| t.name == s.name).count(), 1, "{} listed once", s.name);
        }
    }
}
