//! `net-ping-host`: ping both ways over a tap (`netns.rs`). The typist
//! starts the answerer `icmpd` in the guest's shell, has a second one
//! refused, has the guest's `ping` reach the host side of the tap beside
//! it, then runs iputils' `ping` in the namespace against the guest — five
//! requests, two of full size, two too large for one frame (fragments:
//! refused), then a flood — and checks that the answerer's own counts
//! (printed on `SIGUSR1`) match what the host received.

use crate::netns::{GUEST_IP, HOST_IP};
use crate::typist::Typist;

/// Requests of the host's flood.
const FLOOD: u64 = 2000;
/// Requests icmpd answers before the flood: 5, then 2 of full size.
const BEFORE_FLOOD: u64 = 7;

/// (transmitted, received) from iputils `ping`'s summary line
/// (`5 packets transmitted, 5 received, 0% packet loss, time 4005ms`).
pub(crate) fn ping_summary(out: &str) -> Option<(u64, u64)> {
    let line = out.lines().find(|l| l.contains(" packets transmitted, "))?;
    let mut words = line.split(", ");
    let sent = words.next()?.strip_suffix(" packets transmitted")?.trim().parse().ok()?;
    let received = words.next()?.strip_suffix(" received")?.trim().parse().ok()?;
    Some((sent, received))
}

/// (answered, refused, unsent, dropped) from icmpd's report line, the text
/// after `icmpd: ` (`1005 echo requests answered, 0 refused, 0 unsent, 3
/// dropped`).
pub(crate) fn icmpd_counts(line: &str) -> Option<(u64, u64, u64, u64)> {
    let mut n = line.split(", ").map(|part| part.split(' ').next().and_then(|w| w.parse::<u64>().ok()));
    let counts = (n.next()??, n.next()??, n.next()??, n.next()??);
    line.contains(" echo requests answered, ").then_some(counts)
}

/// Runs the host's `ping args…` against the guest in the namespace.
fn host_ping(t: &Typist<'_>, args: &[&str]) -> Result<(u64, u64), String> {
    let mut all: Vec<&str> = args.to_vec();
    all.push(GUEST_IP);
    // iputils' ping exits 1 when replies are missing: the summary decides.
    let out = match t.in_netns("ping", &all) {
        Ok(out) => out,
        Err(e) => ping_summary(&e).map(|_| e.clone()).ok_or(e)?,
    };
    ping_summary(&out).ok_or_else(|| format!("no summary from the host's ping {}: {}", args.join(" "), out.trim()))
}

/// Asks icmpd (job 1) for its counts.
fn icmpd_report(t: &mut Typist<'_>) -> Result<(u64, u64, u64, u64), String> {
    t.send(b"kill -USR1 %1\n")?;
    let line = t.line_after("icmpd: ", " echo requests answered", 20)?;
    icmpd_counts(&line).ok_or_else(|| format!("icmpd's report unreadable: {line:?}"))
}

/// The typist of `net-ping-host`.
pub(crate) fn ping_both_ways(t: &mut Typist<'_>) -> Result<String, String> {
    t.wait_for("oxok$ ", 60)?;
    t.send(b"icmpd &\n")?;
    t.wait_for(&format!("icmpd: answering echo requests to {GUEST_IP}"), 30)?;
    // A second answerer's filter would overlap the first's: refused.
    t.send(b"icmpd\n")?;
    t.wait_for("icmpd: the filter for echo requests was refused", 30)?;
    // The guest pings the host side of the tap, beside the answerer.
    t.send(format!("ping {HOST_IP} 3\n").as_bytes())?;
    t.wait_for(&format!("ping: {HOST_IP}: 3 sent, 3 received"), 30)?;
    // The host pings the guest.
    let (sent, received) = host_ping(t, &["-c", "5", "-W", "2"])?;
    if (sent, received) != (5, 5) {
        return Err(format!("the host's ping: {sent} sent, {received} received (5 and 5 expected)"));
    }
    // Full-size requests (1514-byte frames) are answered; larger ones
    // arrive in fragments, which icmpd refuses (the first matches its
    // filter, the rest nobody's).
    let (_, full) = host_ping(t, &["-c", "2", "-s", "1472", "-W", "2"])?;
    let (_, fragmented) = host_ping(t, &["-c", "2", "-s", "3000", "-W", "1"])?;
    if (full, fragmented) != (2, 0) {
        return Err(format!("full-size requests: {full} of 2 answered; fragmented: {fragmented} of 2 (0 expected)"));
    }
    let first = icmpd_report(t)?;
    if first != (BEFORE_FLOOD, 2, 0, 0) {
        return Err(format!("icmpd after {BEFORE_FLOOD} requests: answered, refused, unsent, dropped {first:?}"));
    }
    // A flood, 8 requests in flight: whatever is lost, icmpd's count is
    // what the host received, and the shell still answers.
    let flood = FLOOD.to_string();
    let (fsent, freceived) = host_ping(t, &["-f", "-q", "-l", "8", "-c", &flood, "-W", "2"])?;
    if freceived == 0 {
        return Err(format!("the host's flood: {fsent} sent, none answered"));
    }
    let (answered, refused, unsent, dropped) = icmpd_report(t)?;
    if answered != BEFORE_FLOOD + freceived {
        return Err(format!(
            "icmpd answered {answered}, the host received {} ({BEFORE_FLOOD} + {freceived} of the flood's {fsent})",
            BEFORE_FLOOD + freceived
        ));
    }
    t.send(b"echo the shell answers\n")?;
    t.wait_for("the shell answers\n", 20).or_else(|_| t.wait_for("the shell answers\r\n", 1))?;
    t.send(b"kill %1\nwait\nnet\nexit 0\n")?;
    Ok(format!(
        "typist: host ping 5/5, full-size 2/2, fragmented 0/2 (refused); flood {freceived} of {fsent} answered ({dropped} dropped at icmpd's ring, \
         {refused} refused, {unsent} unsent); icmpd answered {answered}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pings_summary() {
        let out = "PING 10.0.2.15 (10.0.2.15) 56(84) bytes of data.\n\n--- 10.0.2.15 ping statistics ---\n\
                   5 packets transmitted, 5 received, 0% packet loss, time 4005ms\nrtt min/avg/max/mdev = 0.5/1/2/0.3 ms\n";
        assert_eq!(ping_summary(out), Some((5, 5)));
        let lossy = "2000 packets transmitted, 1987 received, +3 errors, 0.65% packet loss, time 2101ms";
        assert_eq!(ping_summary(lossy), Some((2000, 1987)));
        assert_eq!(ping_summary("ping: connect: Network is unreachable"), None);
        assert_eq!(ping_summary("x packets transmitted, 1 received"), None);
    }

    #[test]
    fn reads_icmpds_counts() {
        assert_eq!(
            icmpd_counts("1005 echo requests answered, 2 refused, 0 unsent, 31 dropped"),
            Some((1005, 2, 0, 31))
        );
        assert_eq!(icmpd_counts("answering echo requests to 10.0.2.15"), None);
        assert_eq!(icmpd_counts("5 echo requests answered, 0 refused"), None);
    }
}
