//! The GDB remote serial protocol, as much as the profiler needs: packet
//! framing (`$data#xx`, checksum the byte sum mod 256), acks (`+`, or
//! no-ack mode where QEMU offers it), the interrupt byte 0x03, `g` (read
//! registers) and `c` (continue).

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// `$data#cs` for `data`.
pub(crate) fn frame(data: &str) -> Vec<u8> {
    format!("${data}#{:02x}", checksum(data.as_bytes())).into_bytes()
}

/// The packet checksum: the sum of the bytes modulo 256.
pub(crate) fn checksum(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |s, &b| s.wrapping_add(b))
}

/// Reads one packet's body from `bytes` (acks and noise before `$` are
/// skipped); checks the checksum.
pub(crate) fn read_packet(bytes: &mut impl Iterator<Item = std::io::Result<u8>>) -> Result<String, String> {
    let mut next = || match bytes.next() {
        Some(Ok(b)) => Ok(b),
        Some(Err(e)) => Err(format!("reading from the gdbstub: {e}")),
        None => Err("the gdbstub closed the connection".to_string()),
    };
    while next()? != b'$' {}
    let mut body = Vec::new();
    loop {
        match next()? {
            b'#' => break,
            b => body.push(b),
        }
    }
    let hex = [next()?, next()?];
    let given = std::str::from_utf8(&hex).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
    if given != Some(checksum(&body)) {
        return Err(format!("bad checksum on packet {:?}", String::from_utf8_lossy(&body)));
    }
    String::from_utf8(body).map_err(|_| "a packet that is not text".to_string())
}

/// The x86-64 `g` reply: 16 general registers then `rip`, 8 bytes each,
/// little-endian in hex. Returns `rip`.
pub(crate) fn rip_from_g(reply: &str) -> Option<u64> {
    let hex = reply.get(16 * 16..17 * 16)?;
    let mut bytes = [0u8; 8];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(u64::from_le_bytes(bytes))
}

/// What a stop reply says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The guest is stopped (`S..`/`T..`).
    Stopped,
    /// The guest exited or was killed (`W..`/`X..`).
    Gone,
}

/// A stop reply's meaning, or `None` if the packet is not one.
pub(crate) fn stop_kind(reply: &str) -> Option<Stop> {
    match reply.as_bytes().first()? {
        b'S' | b'T' => Some(Stop::Stopped),
        b'W' | b'X' => Some(Stop::Gone),
        _ => None,
    }
}

/// A connection to QEMU's gdbstub.
pub(crate) struct Client {
    out: TcpStream,
    input: std::io::Bytes<BufReader<TcpStream>>,
    /// Whether packets received must be acknowledged with `+`.
    ack: bool,
}

impl Client {
    /// Connects to `127.0.0.1:port`, retrying until `within` has passed
    /// (QEMU opens the port a moment after it starts), then turns acks off
    /// if the stub can. QEMU stops the guest when a debugger attaches (and
    /// says so with a stop reply): call [`Client::resume`] next.
    pub(crate) fn connect(port: u16, within: Duration) -> Result<Client, String> {
        let start = Instant::now();
        let stream = loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => break s,
                Err(e) if start.elapsed() >= within => {
                    return Err(format!("cannot reach QEMU's gdbstub on port {port}: {e}"));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let _ = stream.set_nodelay(true);
        let read = stream.try_clone().map_err(|e| format!("gdbstub socket: {e}"))?;
        let mut c = Client { out: stream, input: BufReader::new(read).bytes(), ack: true };
        c.send(&frame("QStartNoAckMode"))?;
        // Skip the stop reply of the attach; `OK` or an empty (unsupported) reply follows.
        let reply = loop {
            let p = c.packet()?;
            if stop_kind(&p).is_none() {
                break p;
            }
        };
        c.ack = reply != "OK";
        Ok(c)
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.out.write_all(bytes).map_err(|e| format!("writing to the gdbstub: {e}"))
    }

    fn packet(&mut self) -> Result<String, String> {
        let p = read_packet(&mut self.input)?;
        if self.ack {
            self.send(b"+")?;
        }
        Ok(p)
    }

    /// Stops the guest (0x03) and waits for the stop reply; skips any
    /// other packet (e.g. console output).
    pub(crate) fn interrupt(&mut self) -> Result<Stop, String> {
        self.send(&[0x03])?;
        loop {
            if let Some(stop) = stop_kind(&self.packet()?) {
                return Ok(stop);
            }
        }
    }

    /// The stopped guest's `rip` (from `g`).
    pub(crate) fn rip(&mut self) -> Result<u64, String> {
        self.send(&frame("g"))?;
        let reply = self.packet()?;
        rip_from_g(&reply).ok_or(format!("unexpected register reply {:?}", reply.get(..40).unwrap_or(&reply)))
    }

    /// Lets the guest run again (`c`; its reply comes at the next stop).
    pub(crate) fn resume(&mut self) -> Result<(), String> {
        self.send(&frame("c"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> impl Iterator<Item = std::io::Result<u8>> + '_ {
        s.bytes().map(Ok)
    }

    #[test]
    fn framing_and_checksum() {
        assert_eq!(frame("g"), b"$g#67");
        assert_eq!(frame("c"), b"$c#63");
        assert_eq!(frame("QStartNoAckMode"), b"$QStartNoAckMode#b0");
        assert_eq!(checksum(b"OK"), 0x9a);
        assert_eq!(read_packet(&mut bytes("+$OK#9a")), Ok("OK".to_string()));
        assert_eq!(read_packet(&mut bytes("$T02thread:01;#04")), Ok("T02thread:01;".to_string()));
        assert!(read_packet(&mut bytes("$OK#9b")).is_err());
        assert!(read_packet(&mut bytes("$OK")).is_err());
    }

    #[test]
    fn rip_and_stop_replies() {
        let mut g = "0".repeat(16 * 16);
        g.push_str("1032547698badcfe");
        g.push_str("46020000");
        assert_eq!(rip_from_g(&g), Some(0xfedc_ba98_7654_3210));
        assert_eq!(rip_from_g("0011"), None);
        assert_eq!(stop_kind("T02thread:01;"), Some(Stop::Stopped));
        assert_eq!(stop_kind("S05"), Some(Stop::Stopped));
        assert_eq!(stop_kind("W00"), Some(Stop::Gone));
        assert_eq!(stop_kind("OK"), None);
    }
}
