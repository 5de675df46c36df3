//! The Cheetah scenarios (issue 14): init's shell starts `cheetah` with the
//! sample documents; the host drives it through a forwarded port
//! (`hostcheetah.rs`). `scenarios.rs` lists them with the others.

use crate::hostcheetah;
use crate::hostnet::NetSpec;
use crate::scenario::Scenario;

/// Every Cheetah scenario, in the order `scenarios.rs` lists them.
pub(crate) const CHEETAH_SCENARIOS: [Scenario; 5] = [SERVE, ROBUST, LOSSY, FULL, BESIDE_ARPD];

const FORBID: &[&str] = &["frames leaked", "panic", "destroyed:", "FAIL"];

const SERVE: Scenario = Scenario {
    name: "cheetah-serve",
    about: "cheetah's own TCP on the packet ring serves 1 KB/10 KB/100 KB files to host HTTP/1.0 and keep-alive \
            (pipelined) clients byte for byte, HEAD, 304, index (its links loaded with it) and 404; stored \
            checksums, piggybacked ACKs; nothing leaks when it exits",
    cmdline: "run=init",
    input: "cheetah -q --samples --exit-idle 8\nexit 0\n",
    expect: &[
        "cheetah: serving /www on 10.0.2.15:80",
        "cheetah: * connections, * requests, 0 errors, 0 busy (503), 0 refused (RST)",
        "cheetah: * data segments, * with a piggybacked ACK, * bare ACKs",
        "cheetah: checksums * stored, * computed; cache * files in * pages, * loaded, 3 by grouping",
        "cheetah: * frames sent (* bytes), * not sent (device busy), 0 dropped on purpose, * quit",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 300,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[80], host: Some(hostcheetah::serve) }),
    ..Scenario::DEFAULT
};

const BESIDE_ARPD: Scenario = Scenario {
    name: "cheetah-arpd",
    about: "cheetah beside arpd: it leaves the ARP filter to arpd (which answers the host's requests for the \
            machine) and serves the same documents as cheetah-serve",
    cmdline: "run=init",
    input: "arpd &\ncheetah -q --samples --exit-idle 8\nkill -USR1 %1\nkill %1\nwait\nexit 0\n",
    expect: &[
        "arpd: answering ARP for 10.0.2.15, sharing what it hears",
        "cheetah: serving /www on 10.0.2.15:80",
        "cheetah: * connections, * requests, 0 errors, 0 busy (503), 0 refused (RST)",
        "arpd: * requests answered, * neighbours learned, 0 tables handed out, 0 dropped",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:", "FAIL", "ARP filter refused", "another program owns ARP"],
    timeout_secs: 300,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[80], host: Some(hostcheetah::serve) }),
    ..Scenario::DEFAULT
};

const ROBUST: Scenario = Scenario {
    name: "cheetah-robust",
    about: "garbage, missing CR, /../ and %2e%2e traversal, POST, unknown method, overlong line and header, large \
            body, HTTP/3.0 get 400/405/414/431/413/505; a byte-a-time client, clients resetting mid-response, 1000 \
            idle connections held at once, a 200-request flood and a garbage flood: cheetah keeps serving; nothing leaks",
    cmdline: "run=init",
    input: "cheetah -q --samples --exit-idle 8\nexit 0\n",
    expect: &[
        "cheetah: serving /www on 10.0.2.15:80",
        "cheetah: * connections, * requests, * errors, 0 busy (503), 0 refused (RST)",
        "cheetah: * frames sent (* bytes), * not sent (device busy), 0 dropped on purpose, * quit",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 400,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[80], host: Some(hostcheetah::robust) }),
    ..Scenario::DEFAULT
};

const LOSSY: Scenario = Scenario {
    name: "cheetah-retransmit",
    about: "cheetah loses every 7th data segment on purpose (--drop 7): the documents still arrive whole, sent \
            again from the file cache after timeouts and duplicate ACKs",
    cmdline: "run=init",
    input: "cheetah -q --samples --exit-idle 8 --drop 7\nexit 0\n",
    expect: &[
        "cheetah: serving /www on 10.0.2.15:80",
        "cheetah: * data segments, * retransmitted, * timeouts",
        "cheetah: * frames sent (* bytes), * not sent (device busy), * dropped on purpose, * quit",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:", " 0 retransmitted", " 0 dropped on purpose"],
    timeout_secs: 300,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[80], host: Some(hostcheetah::lossy) }),
    ..Scenario::DEFAULT
};

const FULL: Scenario = Scenario {
    name: "cheetah-full",
    about: "cheetah -c 2: with two keep-alive connections held, a third request is answered 503 and closed; once \
            they close, requests are served again",
    cmdline: "run=init",
    input: "cheetah -q -c 2 --samples --exit-idle 8\nexit 0\n",
    expect: &[
        "cheetah: serving /www on 10.0.2.15:80",
        "cheetah: * connections, * requests, 0 errors, 1 busy (503)",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 300,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[80], host: Some(hostcheetah::full) }),
    ..Scenario::DEFAULT
};

#[cfg(test)]
mod tests {
    use super::CHEETAH_SCENARIOS;
    use crate::scenarios::SCENARIOS;

    #[test]
    fn all_listed() {
        for s in CHEETAH_SCENARIOS {
            assert!(s.name.starts_with("cheetah-"));
            assert_eq!(SCENARIOS.iter().filter(|t| t.name == s.name).count(), 1, "{} listed once", s.name);
        }
    }
}
