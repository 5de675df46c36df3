//! The network scenarios (issue 13): each boots with a virtio-net NIC on
//! QEMU's user network — some run a host program against the guest through
//! forwarded ports (`hostnet.rs`) — or, for `net-ping-host`, on a tap in a
//! private network namespace (`netns.rs`, `hostping.rs`). `scenarios.rs`
//! lists them with the others.

use crate::hostnet::{self, NetSpec};
use crate::scenario::Scenario;

/// A NIC with nothing forwarded.
const NIC: Option<NetSpec> = Some(NetSpec { tap: false, udp: &[], tcp: &[], host: None });

/// Every network scenario, in the order `scenarios.rs` lists them.
pub(crate) const NET_SCENARIOS: [Scenario; 15] = [
    UDPECHO,
    NONE,
    HOSTILE,
    SINK,
    KEEPS_UP,
    TCPECHO,
    CORK,
    SHELL,
    BLAST,
    PING,
    PING_HOST,
    ARPD,
    ARPD_SHELL,
    ARPD_HOSTILE,
    ARPD_ENDS,
];

const UDPECHO: Scenario = Scenario {
    name: "net-udpecho",
    about: "the host sends 21 UDP datagrams (9 to 1472 bytes) through hostfwd; udpecho answers ARP and echoes each over its ring and checked transmit",
    cmdline: "run=udpecho",
    expect: &[
        "virtio-net: receive interrupt on vector *",
        "net: virtio-net",
        "udpecho: listening on 10.0.2.15:7",
        "udpecho: answering ARP",
        "udpecho: * datagrams echoed, quit",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:"],
    timeout_secs: 150,
    net: Some(NetSpec { tap: false, udp: &[7], tcp: &[], host: Some(hostnet::udp_echo) }),
    ..Scenario::DEFAULT
};

const NONE: Scenario = Scenario {
    name: "net-none",
    about: "without a NIC the kernel boots as before and the network calls say NotFound",
    cmdline: "run=udpecho",
    expect: &["net: no NIC", "udpecho: no NIC", "none leaked"],
    forbid: &["frames leaked", "panic"],
    ..Scenario::DEFAULT
};

const HOSTILE: Scenario = Scenario {
    name: "net-hostile",
    about: "rings into others' frames, overlapping/superset/stolen filters, filters beyond the transmit template (another port, all TCP, all IPv4, ICMP to another address), spoofed sources and widened templates are refused; nothing leaks",
    cmdline: "run=hostile-net",
    expect: &["net: virtio-net", "hostile-net: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 60,
    net: NIC,
    ..Scenario::DEFAULT
};

const SINK: Scenario = Scenario {
    name: "net-flood-sink",
    about: "a receiver that never drains its ring while the host floods it: drops counted, nothing overwritten, the echo server beside it unaffected",
    cmdline: "run=net-sink&udpecho",
    expect: &[
        "virtio-net: receive interrupt on vector *",
        "net-sink: produced 2, dropped *",
        "net-sink: ok (",
        "udpecho: * datagrams echoed, quit",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 150,
    net: Some(NetSpec { tap: false, udp: &[7, 9], tcp: &[], host: Some(hostnet::flood_and_echo) }),
    ..Scenario::DEFAULT
};

const KEEPS_UP: Scenario = Scenario {
    name: "net-ring-keeps-up",
    about: "the host blasts small datagrams for 15 s at a receiver with a largest ring that empties it at every \
            wake: from its first read on the kernel drops at most a thousandth of what comes, against a fifth \
            copied to be dropped before (a receive takes half a largest ring; while a ring a batch left short is \
            waited for, up to four ticks, the interrupt stays masked until its owner calls or the CPU would idle, \
            and the tick takes no batch)",
    cmdline: "run=arpd+--while-others&net-drain",
    expect: &[
        "net-drain: ring of 62 entries bound to UDP 9",
        "net-drain: received *, ring dropped * (* before its first read)",
        "net-drain: ok (",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 150,
    net: Some(NetSpec { tap: false, udp: &[9], tcp: &[], host: Some(hostnet::blast) }),
    ..Scenario::DEFAULT
};

const TCPECHO: Scenario = Scenario {
    name: "net-tcpecho",
    about: "smoltcp in the libOS: the host opens TCP connections through hostfwd (12 B, 20 kB, 200 kB) and checks every byte echoed",
    cmdline: "run=tcpecho",
    expect: &["tcpecho: listening on 10.0.2.15:7", "tcpecho: * connections, * bytes echoed, quit", "none leaked"],
    forbid: &["frames leaked", "panic", "destroyed:"],
    timeout_secs: 180,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[7], host: Some(hostnet::tcp_echo) }),
    ..Scenario::DEFAULT
};

const CORK: Scenario = Scenario {
    name: "net-cork",
    about: "corked TCP sends on the libOS's sockets (TCP_CORK, MSG_MORE), counted by the NIC's exposed sent counter: \
            corked writes send nothing, the cork's removal sends them as one segment, a corked write left alone goes \
            within the 200 ms ceiling, whole segments of a large corked write go at once, MSG_MORE writes and a \
            shutdown leave in one segment with the FIN; the host checks all 5,460 bytes, then closes a second \
            connection while bytes wait corked",
    cmdline: "run=net-cork",
    expect: &["net-cork: listening on port 7", "net-cork: done", "net-cork: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 150,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[7], host: Some(hostnet::cork_client) }),
    ..Scenario::DEFAULT
};

/// What no `arpd` scenario may print: a leak, a crash, or a stack refused ARP.
const ARPD_FORBID: [&str; 5] =
    ["frames leaked", "panic", "destroyed:", "ARP filter refused", "another program owns ARP"];

const ARPD: Scenario = Scenario {
    name: "net-arpd",
    about: "two smoltcp stacks at once, neither owning ARP: arpd owns the ARP filter and grants its neighbour table \
            read-only to each; tcpecho on port 8 and sockecho on port 7 resolve the gateway through it (their own \
            requests sent, the answers read from the table) and both echo the host's TCP and UDP traffic and \
            connect back to it; nothing leaks",
    cmdline: "run=arpd+--while-others&tcpecho+8&sockecho",
    expect: &[
        // arpd and tcpecho start together and print in either order.
        "arpd: answering ARP for 10.0.2.15, sharing what it hears <&> tcpecho: ARP through arpd's neighbour table",
        "sockecho: connected to 10.0.2.2:*, 15 bytes back",
        // The two servers end in either order; arpd ends last.
        "tcpecho: 4 connections, 220016 bytes echoed, quit <&> sockecho: 4 connections, 220016 bytes echoed, * datagrams echoed, quit <&> tcpecho: 1 ARP requests answered from the neighbour table",
        "arpd: * requests answered, * neighbours learned, 2 tables handed out, 0 dropped",
        "none leaked",
    ],
    forbid: &[ARPD_FORBID[0], ARPD_FORBID[1], ARPD_FORBID[2], ARPD_FORBID[3], ARPD_FORBID[4], "with status 1"],
    timeout_secs: 240,
    net: Some(NetSpec { tap: false, udp: &[7], tcp: &[7, 8], host: Some(hostnet::two_stacks) }),
    ..Scenario::DEFAULT
};

const ARPD_SHELL: Scenario = Scenario {
    name: "net-arpd-shell",
    about: "arpd started from the shell: the shell's later children find it as their ancestor's and get a call \
            capability for it (callcap::pass_on), so sockecho in the background and tcpecho in the foreground both \
            take ARP from its table and serve the host at once, and ping reaches the gateway through it too; \
            kill -USR1 shows its counts",
    cmdline: "run=init",
    input: "arpd &\nsockecho &\ntcpecho 8\nping 10.0.2.2 2\nkill -USR1 %1\nkill %1\nwait\nexit 0\n",
    expect: &[
        "arpd: answering ARP for 10.0.2.15, sharing what it hears",
        "tcpecho: ARP through arpd's neighbour table",
        "sockecho: connected to 10.0.2.2:*, 15 bytes back",
        // sockecho (in the background) ends anywhere among these.
        "tcpecho: 1 ARP requests answered from the neighbour table <&> \
         tcpecho: 4 connections, 220016 bytes echoed, quit <&> \
         ping: 32 bytes from 10.0.2.2: icmp_seq=0 time=* ms <&> \
         ping: 10.0.2.2: 2 sent, 2 received <&> \
         arpd: * requests answered, * neighbours learned, 3 tables handed out, 0 dropped <&> \
         sockecho: 4 connections, 220016 bytes echoed, * datagrams echoed, quit",
        "none leaked",
    ],
    forbid: &[
        ARPD_FORBID[0],
        ARPD_FORBID[1],
        ARPD_FORBID[2],
        ARPD_FORBID[3],
        ARPD_FORBID[4],
        "(sockecho) exited with status 1",
        "(tcpecho) exited with status 1",
    ],
    timeout_secs: 240,
    net: Some(NetSpec { tap: false, udp: &[7], tcp: &[7, 8], host: Some(hostnet::two_stacks) }),
    ..Scenario::DEFAULT
};

const ARPD_HOSTILE: Scenario = Scenario {
    name: "net-arpd-hostile",
    about: "a reader attacks the neighbour table: arpd answers nothing but the table; the capability it grants \
            reads only (mapping it writable or deriving write refused); ARP packets naming another sender are \
            refused before they leave; the table still answers; nothing leaks",
    cmdline: "run=arpd+--while-others&hostile-arp",
    expect: &[
        "hostile-arp: ok (",
        "arpd: * requests answered, * neighbours learned, 2 tables handed out, 0 dropped",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[], host: None }),
    ..Scenario::DEFAULT
};

const ARPD_ENDS: Scenario = Scenario {
    name: "net-arpd-ends",
    about: "arpd ends under its readers: a table mapped past its server's end is replaced by the next server's \
            (never read as live), and a socket stack whose table server ended takes the ARP filter itself within \
            its retry period; nothing leaks",
    cmdline: "run=arp-fallback",
    expect: &["arp-fallback: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    net: Some(NetSpec { tap: false, udp: &[], tcp: &[], host: None }),
    ..Scenario::DEFAULT
};

const SHELL: Scenario = Scenario {
    name: "net-shell",
    about: "the shell's net view reads the network table and the filter table; udpecho started from the shell \
            inherits init's template through spawn, narrows it and echoes the host's datagrams, while a second one \
            in the background shows its ring, its per-environment counts and its filter spelled as header fields",
    cmdline: "run=init",
    input: "net\nudpecho 9 &\nudpecho\nnet\nkill %1\nwait\nnet\nexit 0\n",
    expect: &[
        "nic 52:54:00:12:34:56",
        "received * unclaimed * sent 0 * filters 0 * rings 0",
        "RING * OWNER",
        "udpecho: listening on 10.0.2.15:7",
        "udpecho: * datagrams echoed, quit",
        // Which udpecho owns the ARP filter depends on which started first.
        "received * sent * filters * rings 1  interrupts *",
        "ENV * RINGS * PACKETS * DROPPED",
        "FILTER * OWNER * RING*REFINES*ACCEPTED  ATOMS",
        "  - * 0  ether.type=0x0800 ip.version&0xf0=0x40 ip.frag&0x1fff=0x0 ip.proto=udp +ihl udp.dport=9",
        "received * sent * filters 0 * rings 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "no network table", "template refused"],
    timeout_secs: 120,
    net: Some(NetSpec { tap: false, udp: &[7], tcp: &[], host: Some(hostnet::udp_echo) }),
    ..Scenario::DEFAULT
};

const BLAST: Scenario = Scenario {
    name: "net-blast",
    about: "the host blasts full-size datagrams at an unclaimed port as fast as it can for 30 s; the shell answers \
            its `net` view four times meanwhile (the kernel's unclaimed count growing), in the middle of it the echo \
            server started from the shell answers every datagram, and nothing leaks",
    cmdline: "run=init",
    typist: Some(crate::hostnet::shell_through_blast),
    expect: &[
        "virtio-net: receive interrupt on vector *",
        "udpecho: listening on 10.0.2.15:7",
        "udpecho: * datagrams echoed, quit",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:"],
    timeout_secs: 180,
    net: Some(NetSpec { tap: false, udp: &[7, 9999], tcp: &[], host: Some(hostnet::blast_and_echo) }),
    ..Scenario::DEFAULT
};

const PING: Scenario = Scenario {
    name: "net-ping",
    about: "ping (smoltcp's ICMP socket in the libOS) gets QEMU's gateway to answer 3 echo requests",
    cmdline: "run=ping+10.0.2.2+3",
    expect: &["ping: * bytes from 10.0.2.2: icmp_seq=0", "ping: 10.0.2.2: 3 sent, 3 received", "none leaked"],
    forbid: &["frames leaked", "panic", "destroyed:"],
    timeout_secs: 60,
    net: NIC,
    ..Scenario::DEFAULT
};

const PING_HOST: Scenario = Scenario {
    name: "net-ping-host",
    about: "ping both ways over a tap in a private namespace: icmpd answers the host's iputils ping (5 of 5, 2 of \
            full size; fragmented ones refused; then a 2000-request flood, its own count equal to what the host \
            received), a second icmpd is refused its overlapping filter, the guest's ping reaches the host side \
            beside it, the shell still answers",
    cmdline: "run=init",
    typist: Some(crate::hostping::ping_both_ways),
    expect: &[
        "icmpd: answering echo requests to 10.0.2.15",
        "icmpd: the filter for echo requests was refused",
        "ping: 10.0.2.2: 3 sent, 3 received",
        "icmpd: 7 echo requests answered, 2 refused, 0 unsent, 0 dropped",
        "icmpd: * echo requests answered",
        "the shell answers",
        "received * sent * filters 0 * rings 0",
        "none leaked",
    ],
    forbid: &["frames leaked", "panic", "destroyed:", "template refused"],
    timeout_secs: 150,
    net: Some(NetSpec { tap: true, udp: &[], tcp: &[], host: None }),
    ..Scenario::DEFAULT
};

#[cfg(test)]
mod tests {
    use super::NET_SCENARIOS;
    use crate::scenarios::SCENARIOS;

    #[test]
    fn all_listed() {
        for s in NET_SCENARIOS {
            assert!(s.name.starts_with("net-"));
            assert_eq!(SCENARIOS.iter().filter(|t| t.name == s.name).count(), 1, "{} listed once", s.name);
        }
    }
}
