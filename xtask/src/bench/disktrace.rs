//! Disk requests per workload phase, from one QEMU trace log (`-D FILE`,
//! the `log` trace backend) holding, in the order they happened, the
//! events `virtio_blk_handle_read`, `virtio_blk_handle_write`,
//! `virtio_blk_req_complete` and `serial_write`. The serial port's
//! transmitted bytes (writes to register 0) rebuild the console text in
//! the same stream, so the benchmark program's marker lines
//! (`bench: phase NAME OPS UNIT` … `bench: NAME VALUE us`) cut the disk
//! events into phases without any clock: an event belongs to the phase
//! whose marker came before it and whose result line did not.

/// The QEMU arguments that write the trace to `file`.
pub(crate) fn qemu_args(file: &std::path::Path) -> Vec<String> {
    let mut a = vec!["-D".to_string(), file.display().to_string()];
    for e in ["virtio_blk_handle_read", "virtio_blk_handle_write", "virtio_blk_req_complete", "serial_write"] {
        a.extend(["-trace".to_string(), e.to_string()]);
    }
    a
}

/// Disk requests of one phase.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Requests {
    /// Operations the phase did (files, MiB) and what one is.
    pub ops: u64,
    pub unit: String,
    /// Read and write requests the guest made (before QEMU merges any).
    pub reads: u64,
    pub writes: u64,
    /// Requests completed: reads, writes and the rest (flushes, …).
    pub completed: u64,
    /// 512-byte sectors read and written.
    pub sectors_read: u64,
    pub sectors_written: u64,
}

impl Requests {
    /// Completed requests that were neither reads nor writes (flushes):
    /// every request of a phase completes within it, as the program waits.
    pub(crate) fn flushes(&self) -> u64 {
        self.completed.saturating_sub(self.reads + self.writes)
    }

    /// All requests per operation.
    pub(crate) fn per_op(&self) -> f64 {
        (self.reads + self.writes + self.flushes()) as f64 / self.ops.max(1) as f64
    }
}

/// Requests per phase that ended with its result line, in the order the
/// phases ran (a phase that failed or never ended is left out: its counts
/// would be partial).
pub(crate) fn phases(trace: &str) -> Vec<(String, Requests)> {
    let mut out: Vec<(String, Requests)> = Vec::new();
    let mut open: Option<usize> = None;
    let mut line: Vec<u8> = Vec::new();
    for ev in trace.lines() {
        let mut words = ev.split_whitespace();
        let Some(name) = words.next() else { continue };
        // Trace lines may carry a `pid@seconds:` prefix (`-msg timestamp=on`).
        let name = name.rsplit(':').next().unwrap_or(name);
        match name {
            "serial_write" => {
                let Some(byte) = serial_byte(ev) else { continue };
                if byte != b'\n' {
                    if byte != b'\r' && line.len() < 512 {
                        line.push(byte);
                    }
                    continue;
                }
                let text = String::from_utf8_lossy(&line).into_owned();
                line.clear();
                let words: Vec<&str> = text.split_whitespace().collect();
                match words.as_slice() {
                    ["bench:", "phase", phase, ops, unit] => {
                        let ops = ops.parse().unwrap_or(0);
                        out.push((phase.to_string(), Requests { ops, unit: unit.to_string(), ..Requests::default() }));
                        open = Some(out.len() - 1);
                    }
                    ["bench:", done, _, _] if open.is_some_and(|i| out[i].0 == *done) => open = None,
                    // A phase that failed counts nothing.
                    ["bench:", "skip", failed, ..] if open.is_some_and(|i| out[i].0 == *failed) => {
                        out.pop();
                        open = None;
                    }
                    _ => {}
                }
            }
            "virtio_blk_handle_read" | "virtio_blk_handle_write" | "virtio_blk_req_complete" => {
                let Some(i) = open else { continue };
                let r = &mut out[i].1;
                let sectors = field(ev, "nsectors").unwrap_or(0);
                match name {
                    "virtio_blk_handle_read" => (r.reads, r.sectors_read) = (r.reads + 1, r.sectors_read + sectors),
                    "virtio_blk_handle_write" => {
                        (r.writes, r.sectors_written) = (r.writes + 1, r.sectors_written + sectors)
                    }
                    _ => r.completed += 1,
                }
            }
            _ => {}
        }
    }
    // Nor does one the boot did not finish (a time limit).
    if open.is_some() {
        out.pop();
    }
    out
}

/// The byte a `serial_write write addr 0x00 val 0xNN` line sends (other
/// registers configure the port).
fn serial_byte(ev: &str) -> Option<u8> {
    let addr = hex_after(ev, "addr")?;
    let val = hex_after(ev, "val")?;
    (addr == 0).then_some(val as u8)
}

fn hex_after(ev: &str, key: &str) -> Option<u64> {
    let mut w = ev.split_whitespace().skip_while(|w| *w != key);
    w.next()?;
    u64::from_str_radix(w.next()?.trim_start_matches("0x"), 16).ok()
}

/// A decimal field `key N` of a trace line.
fn field(ev: &str, key: &str) -> Option<u64> {
    let mut w = ev.split_whitespace().skip_while(|w| *w != key);
    w.next()?;
    w.next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serial events that send `text`.
    fn console(text: &str) -> String {
        text.bytes().map(|b| format!("serial_write write addr 0x00 val 0x{b:02x}\n")).collect()
    }

    const READ: &str = "virtio_blk_handle_read vdev 0x55 req 0x56 sector 0 nsectors 8\n";
    const WRITE: &str = "virtio_blk_handle_write vdev 0x55 req 0x57 sector 8 nsectors 16\n";
    const DONE: &str = "virtio_blk_req_complete vdev 0x55 req 0x57 status 0\n";

    #[test]
    fn counts_requests_between_the_markers() {
        let mut t = String::from("serial_write write addr 0x03 val 0x80\nserial_write write addr 0x00 val 0x01\n");
        t += READ; // before any phase: boot, not counted
        t += &console("bench: start\r\nbench: phase smallfile_create 4 file\r\n");
        t += &format!("{WRITE}{DONE}{WRITE}{DONE}{DONE}");
        t += &console("bench: smallfile_create 1234 us\n");
        t += WRITE; // between phases: not counted
        t += &console("bench: phase seq_read 2 MiB\n");
        t += &format!("{READ}{DONE}{READ}{DONE}");
        t += &console("bench: seq_read 99 us\nbench: done\n");
        let p = phases(&t);
        assert_eq!(p.len(), 2);
        let (name, c) = &p[0];
        assert_eq!((name.as_str(), c.ops, c.unit.as_str()), ("smallfile_create", 4, "file"));
        assert_eq!((c.reads, c.writes, c.completed, c.flushes()), (0, 2, 3, 1));
        assert_eq!((c.sectors_read, c.sectors_written), (0, 32));
        assert_eq!(c.per_op(), 0.75);
        let (name, c) = &p[1];
        assert_eq!((name.as_str(), c.reads, c.writes, c.flushes(), c.sectors_read), ("seq_read", 2, 0, 0, 16));
        assert_eq!(c.per_op(), 1.0);
    }

    #[test]
    fn failed_and_unfinished_phases_count_nothing_and_noise_is_ignored() {
        let mut t = console("bench: phase copy_cp 100 file\n");
        t += WRITE;
        t += &console("dfsd: something else\nbench: skip copy_cp /bin/busybox: No child\n");
        t += WRITE;
        t += &console("bench: phase seq_write 1 MiB\n");
        t += "some_other_event x y\n\nserial_write write addr 0x00 val zz\n";
        t += &format!("1234@1700000000.000001:{WRITE}");
        // A result line of another name does not close the phase.
        t += &console("bench: smallfile_read 5 us\n");
        t += WRITE;
        t += &console("bench: seq_write 7 us\nbench: phase seq_read 1 MiB\n");
        t += READ; // never ends: the boot timed out
        let p = phases(&t);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].0.as_str(), p[0].1.writes), ("seq_write", 2));
    }

    #[test]
    fn arguments_name_every_event() {
        let a = qemu_args(std::path::Path::new("/t/x.trace")).join(" ");
        assert!(a.starts_with("-D /t/x.trace -trace virtio_blk_handle_read"));
        assert!(a.contains("-trace serial_write") && a.contains("-trace virtio_blk_req_complete"));
    }
}
