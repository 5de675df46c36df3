//! What the host's CPUs do while idle during `cargo xtask bench --http`.
//!
//! Every figure of the network benchmark is a conversation between a host
//! program and a guest: each round trip wakes QEMU's threads and the client
//! in turn, on both host cores. On these machines the host is itself a
//! virtual machine (its cpuidle driver is `haltpoll` with
//! `guest_halt_poll_ns` 0), so an idle host core halts at once and every
//! wake-up of it goes through the outer hypervisor: tens of microseconds a
//! round trip, the same for Oxok and for Linux, which squeezes their ratio
//! towards 1 (`bench/README.md`, "The host's idle state").
//!
//! [`HostIdle::apply`] with [`Policy::Poll`] makes the host's cores poll
//! instead, for as long as the result is held, the way latency benchmarks are usually run (and tuned's
//! `latency-performance` profile does): a PM QoS request of 0 µs on
//! `/dev/cpu_dma_latency`, which the kernel drops when the file is closed —
//! at the end of the run, on an error or when the process dies.
//! `--host-idle halt` measures with the host's own setting.

use std::fs::File;
use std::io::Write;

/// The host-idle policy of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Policy {
    /// Idle host cores poll (a 0 µs wake-up latency request held).
    Poll,
    /// The host's own setting (idle cores halt).
    Halt,
}

impl Policy {
    /// `poll` or `halt`, as `--host-idle` takes them.
    pub(crate) fn parse(word: &str) -> Option<Policy> {
        match word {
            "poll" => Some(Policy::Poll),
            "halt" => Some(Policy::Halt),
            _ => None,
        }
    }
}

/// The policy in force while this is alive.
pub(crate) struct HostIdle {
    /// The open request (polling), closed on drop.
    _request: Option<File>,
    /// What the table says about it.
    pub description: String,
}

/// Where a process asks for a CPU wake-up latency bound.
const LATENCY_REQUEST: &str = "/dev/cpu_dma_latency";

impl HostIdle {
    /// Applies `policy` for as long as the result lives. Polling that
    /// cannot be set (no such device, not root) leaves the host's setting
    /// and says so in the description, which goes into the table.
    pub(crate) fn apply(policy: Policy) -> HostIdle {
        let driver = cpuidle_driver();
        if policy == Policy::Halt {
            return HostIdle {
                _request: None,
                description: format!("idle host cores as the host sets them ({driver})"),
            };
        }
        match request_zero_latency() {
            Ok(file) => HostIdle {
                _request: Some(file),
                description: format!(
                    "idle host cores poll ({LATENCY_REQUEST} held at 0 µs during the run; cpuidle {driver})"
                ),
            },
            Err(e) => HostIdle {
                _request: None,
                description: format!("idle host cores as the host sets them ({driver}): polling not set: {e}"),
            },
        }
    }
}

/// Opens the latency request and asks for 0 µs (a native-endian `i32`).
fn request_zero_latency() -> Result<File, String> {
    let mut f = File::options().write(true).open(LATENCY_REQUEST).map_err(|e| format!("{LATENCY_REQUEST}: {e}"))?;
    f.write_all(&0i32.to_ne_bytes()).map_err(|e| format!("{LATENCY_REQUEST}: {e}"))?;
    Ok(f)
}

/// The host's cpuidle driver and governor, as sysfs names them.
fn cpuidle_driver() -> String {
    let read = |name: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpuidle/{name}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    format!("driver {}, governor {}", read("current_driver"), read("current_governor_ro"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse() {
        assert_eq!(Policy::parse("poll"), Some(Policy::Poll));
        assert_eq!(Policy::parse("halt"), Some(Policy::Halt));
        assert_eq!(Policy::parse("spin"), None);
    }

    #[test]
    fn halting_holds_no_request() {
        let h = HostIdle::apply(Policy::Halt);
        assert!(h._request.is_none());
        assert!(h.description.starts_with("idle host cores as the host sets them"));
    }
}
