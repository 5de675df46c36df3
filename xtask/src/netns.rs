//! A private network for a guest: a network namespace the tool creates for
//! one run (`oxok-net-<pid>-<n>`), holding a tap device (`oxtap<pid>`) with
//! the host side's address 10.0.2.2/24 and a permanent neighbour entry for
//! the guest (10.0.2.15, QEMU's default MAC), so no ARP traffic from the
//! host side mixes into counts. QEMU and the host's programs both run
//! inside it (`ip netns exec`), so nothing of the run is visible on the
//! host's own interfaces and only private addresses are used. Used by
//! `cargo xtask bench --http` and by scenarios with a tap NIC
//! (`NetSpec::tap`, e.g. `net-ping-host`).
//!
//! The namespace (and the tap inside it) is deleted when the [`Netns`] is
//! dropped — on success, on error and on a panic — and a namespace left by
//! a run that was killed (its pid no longer alive) is deleted at the start
//! of the next one.

use std::process::{Command, Stdio};

/// The host side's address on the tap (the guests' gateway).
pub(crate) const HOST_IP: &str = "10.0.2.2";
/// Both guests' address (Oxok's programs use it; Linux is given it).
pub(crate) const GUEST_IP: &str = "10.0.2.15";
/// Both guests' MAC (QEMU's default, set explicitly).
pub(crate) const GUEST_MAC: &str = "52:54:00:12:34:56";
/// Names of the namespaces this tool creates: the prefix, a pid, `-` and
/// a number counting this process's namespaces.
const PREFIX: &str = "oxok-net-";
/// Namespaces this process made so far (scenarios may run side by side).
static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A namespace with a tap device, deleted on drop.
#[derive(Debug)]
pub(crate) struct Netns {
    pub name: String,
    pub tap: String,
}

impl Netns {
    /// Creates the namespace and its tap (root needed); `purpose` names
    /// what needs it, for the message when it cannot be made.
    pub(crate) fn create(purpose: &str) -> Result<Netns, String> {
        for stale in stale_namespaces(&ip_output(&["netns", "list"]), |pid| {
            std::path::Path::new(&format!("/proc/{pid}")).exists()
        }) {
            eprintln!("xtask: deleting the namespace {stale} left by an earlier run");
            let _ = ip(&["netns", "del", &stale]);
        }
        let pid = std::process::id();
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{PREFIX}{pid}-{n}");
        // Each namespace has its own devices: the tap's name need not differ.
        let tap = format!("oxtap{pid}");
        ip(&["netns", "add", &name]).map_err(|e| {
            format!("{e} ({purpose} runs the guest on a tap device in a network namespace of its own: that needs root)")
        })?;
        // From here on, dropping `ns` deletes what was made.
        let ns = Netns { name, tap };
        let n = ns.name.as_str();
        let t = ns.tap.as_str();
        ip(&["-n", n, "link", "set", "lo", "up"])?;
        ip(&["-n", n, "tuntap", "add", "dev", t, "mode", "tap"])?;
        ip(&["-n", n, "addr", "add", &format!("{HOST_IP}/24"), "dev", t])?;
        ip(&["-n", n, "link", "set", t, "up"])?;
        ip(&["-n", n, "neigh", "replace", GUEST_IP, "lladdr", GUEST_MAC, "dev", t, "nud", "permanent"])?;
        Ok(ns)
    }

    /// `program` to be run inside the namespace (arguments to add).
    pub(crate) fn command(&self, program: &str) -> Command {
        exec(&self.name, program)
    }

    /// `program` to be run inside the namespace, pinned to host `core`.
    pub(crate) fn pinned(&self, core: &str, program: &str) -> Command {
        if !crate::deps::have_program("taskset") {
            return self.command(program);
        }
        let mut c = self.command("taskset");
        c.args(["-c", core, program]);
        c
    }

    /// Packets (received, sent) on the tap, read from `/proc/PID/net/dev`
    /// of a process `pid` inside the namespace.
    pub(crate) fn tap_packets(&self, pid: u32) -> Option<(u64, u64)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/dev")).ok()?;
        dev_packets(&text, &self.tap)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["-n", &self.name, "link", "del", &self.tap]);
        if let Err(e) = ip(&["netns", "del", &self.name]) {
            eprintln!("xtask: could not delete the namespace {}: {e}", self.name);
        }
    }
}

/// `program` to be run inside namespace `name` (arguments to add).
pub(crate) fn exec(name: &str, program: &str) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", name, program]);
    c
}

/// QEMU arguments for the guest's NIC on tap `tap`: virtio-net with the
/// MAC [`GUEST_MAC`], every offload off unless `offloads` (the device's
/// defaults, with QEMU's virtio-net header on the tap).
pub(crate) fn tap_nic_args(tap: &str, offloads: bool) -> Vec<String> {
    let mut device = format!("virtio-net-pci,netdev=n0,mac={GUEST_MAC}");
    if !offloads {
        device.push(',');
        device.push_str(crate::hostnet::VIRTIO_NET_OFFLOADS_OFF);
    }
    let mut args =
        vec!["-netdev".into(), format!("tap,id=n0,ifname={tap},script=no,downscript=no"), "-device".into(), device];
    args.extend(crate::hostnet::capture_args(tap));
    args
}

/// Runs `ip args`; an error carries its message.
fn ip(args: &[&str]) -> Result<(), String> {
    let out =
        Command::new("ip").args(args).stdin(Stdio::null()).output().map_err(|e| format!("could not run ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("`ip {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn ip_output(args: &[&str]) -> String {
    Command::new("ip").args(args).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default()
}

/// The namespaces in `ip netns list`'s output that this tool made for a
/// process that is no longer `alive`.
pub(crate) fn stale_namespaces(list: &str, alive: impl Fn(u32) -> bool) -> Vec<String> {
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|name| {
            let (pid, n) = name.strip_prefix(PREFIX)?.split_once('-')?;
            let pid: u32 = pid.parse().ok()?;
            n.parse::<u32>().ok()?;
            (!alive(pid)).then(|| name.to_string())
        })
        .collect()
}

/// Packets (received, sent) of interface `dev` in `/proc/net/dev`'s text.
pub(crate) fn dev_packets(text: &str, dev: &str) -> Option<(u64, u64)> {
    text.lines().find_map(|l| {
        let (name, rest) = l.split_once(':')?;
        if name.trim() != dev {
            return None;
        }
        let f: Vec<u64> = rest.split_whitespace().filter_map(|v| v.parse().ok()).collect();
        // 8 receive fields (bytes, packets, …), then transmit (bytes, packets, …).
        Some((*f.get(1)?, *f.get(9)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_namespaces_of_dead_runs_only() {
        let list =
            "oxok-net-41-0 (id: 3)\nother-ns\noxok-net-42-1\noxok-net-x-0\noxok-net-44\noxok-net-43-12 (id: 0)\n";
        assert_eq!(stale_namespaces(list, |pid| pid == 42), ["oxok-net-41-0", "oxok-net-43-12"]);
        assert!(stale_namespaces("", |_| false).is_empty());
    }

    #[test]
    fn nic_on_the_tap() {
        let off = tap_nic_args("oxtap1", false);
        assert_eq!(off[1], "tap,id=n0,ifname=oxtap1,script=no,downscript=no");
        assert!(off[3].starts_with("virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56,csum=off,"));
        assert_eq!(tap_nic_args("oxtap1", true)[3], "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56");
    }

    #[test]
    fn reads_tap_counters() {
        let text = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
oxtap77:  123456    1001    0    0    0     0          0         0   654321     999    0    0    0     0       0          0
";
        assert_eq!(dev_packets(text, "oxtap77"), Some((1001, 999)));
        assert_eq!(dev_packets(text, "lo"), Some((0, 0)));
        assert_eq!(dev_packets(text, "oxtap7"), None);
    }
}
