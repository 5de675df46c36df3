//! dm-log-writes logs (Linux `drivers/md/dm-log-writes.c`; QEMU 7.2's
//! `blklogwrites` block driver writes the same format): a superblock in
//! sector 0 — magic, version, entry count, sector size — then one entry
//! per request from sector 1 on. An entry is one sector holding `sector`,
//! `nr_sectors`, `flags` and `data_len` (little-endian u64s; a mark's text
//! follows them in the same sector), then, for a write, its `nr_sectors`
//! sectors of data. Sector numbers count the log's sector size.
//!
//! [`to_events`] turns a log into the crash harness's [`Event`]s, one per
//! 4 KiB block written and one per flush, in log order.

use oxok_abi::xn::BLOCK_SIZE;

use crate::host::Event;

/// The superblock's magic.
pub const MAGIC: u64 = 0x006a_7366_7773_6872;
/// The only version there is.
pub const VERSION: u64 = 1;
/// A flush: everything completed before it is durable.
pub const FLUSH: u64 = 1 << 0;
/// Forced unit access: this write is durable when it completes.
pub const FUA: u64 = 1 << 1;
/// A discard of `nr_sectors` sectors (no data follows).
pub const DISCARD: u64 = 1 << 2;
/// A mark (text in the entry's sector, no data).
pub const MARK: u64 = 1 << 3;
/// A write the file system flagged as metadata (Linux only).
pub const METADATA: u64 = 1 << 4;

/// Bytes of an entry's header.
const ENTRY_BYTES: usize = 32;

/// One logged request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// First sector (of the log's sector size) of the request.
    pub sector: u64,
    /// Sectors it covers (0 for a flush or a mark).
    pub nr_sectors: u64,
    /// [`FLUSH`], [`FUA`], [`DISCARD`], [`MARK`], [`METADATA`].
    pub flags: u64,
    /// A write's data; a mark's text.
    pub data: Vec<u8>,
}

/// A parsed log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Log {
    /// Bytes per sector.
    pub sector_size: usize,
    /// The entries, in the order the device received the requests.
    pub entries: Vec<Entry>,
}

fn word(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Parses a whole log; `Err` names the first thing wrong (bad magic or
/// version, a sector size that is not a power of two from 512 to 4096,
/// an entry or its data past the end, an entry with unknown flags).
pub fn parse(bytes: &[u8]) -> Result<Log, String> {
    let (magic, version, n) = (word(bytes, 0), word(bytes, 8), word(bytes, 16));
    if magic != Some(MAGIC) {
        return Err(format!("not a dm-log-writes log (magic {magic:x?})"));
    }
    if version != Some(VERSION) {
        return Err(format!("log version {version:?}, not {VERSION}"));
    }
    let ss = bytes.get(24..28).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    if !ss.is_power_of_two() || !(512..=BLOCK_SIZE).contains(&ss) {
        return Err(format!("log sector size {ss}"));
    }
    let n = n.unwrap_or(0);
    let mut entries = Vec::new();
    let mut at = ss;
    for i in 0..n {
        let head = bytes.get(at..at + ss).ok_or_else(|| format!("entry {i} of {n} past the end of the log"))?;
        let (sector, nr, flags, len) = (word(head, 0), word(head, 8), word(head, 16), word(head, 24));
        let (Some(sector), Some(nr), Some(flags), Some(len)) = (sector, nr, flags, len) else {
            return Err(format!("entry {i}: short header"));
        };
        if flags & !(FLUSH | FUA | DISCARD | MARK | METADATA) != 0 {
            return Err(format!("entry {i}: unknown flags {flags:#x}"));
        }
        at += ss;
        let data = if flags & MARK != 0 {
            let len = (len as usize).min(ss - ENTRY_BYTES);
            head[ENTRY_BYTES..ENTRY_BYTES + len].to_vec()
        } else if flags & DISCARD == 0 && nr > 0 {
            let bytes_len = usize::try_from(nr).ok().and_then(|k| k.checked_mul(ss)).ok_or("entry too long")?;
            let d = bytes.get(at..at + bytes_len).ok_or_else(|| format!("entry {i}: data past the end of the log"))?;
            at += bytes_len;
            d.to_vec()
        } else {
            Vec::new()
        };
        entries.push(Entry { sector, nr_sectors: nr, flags, data });
    }
    Ok(Log { sector_size: ss, entries })
}

/// Encodes a log (the inverse of [`parse`]; the host tests write logs
/// with it).
pub fn encode(log: &Log) -> Vec<u8> {
    let ss = log.sector_size;
    let mut out = vec![0u8; ss];
    out[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    out[8..16].copy_from_slice(&VERSION.to_le_bytes());
    out[16..24].copy_from_slice(&(log.entries.len() as u64).to_le_bytes());
    out[24..28].copy_from_slice(&(ss as u32).to_le_bytes());
    for e in &log.entries {
        let mut head = vec![0u8; ss];
        let mark = e.flags & MARK != 0;
        let len = if mark { e.data.len() as u64 } else { 0 };
        for (k, v) in [e.sector, e.nr_sectors, e.flags, len].into_iter().enumerate() {
            head[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        if mark {
            let n = e.data.len().min(ss - ENTRY_BYTES);
            head[ENTRY_BYTES..ENTRY_BYTES + n].copy_from_slice(&e.data[..n]);
        }
        out.extend_from_slice(&head);
        if !mark {
            out.extend_from_slice(&e.data);
        }
    }
    out
}

/// A log as crash-harness events over a file system that starts `skip`
/// blocks into the disk (writes below it are dropped), with where each
/// count of written blocks ends.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// Writes (per 4 KiB block) and flushes, in log order.
    pub events: Vec<Event>,
    /// `at[k]`: events made up to the `k`-th block written, as the
    /// kernel's `writes` counter counts them (flushes, marks and discards
    /// count none: QEMU drops a flush that follows no write).
    pub at: Vec<usize>,
}

/// Converts `log` to events. A discard zeroes its blocks; a FUA write is
/// an ordinary write (it may be lost with the others of its epoch: a
/// superset of the real crash states). `Err` if a write is not whole
/// 4 KiB blocks.
pub fn to_events(log: &Log, skip: u64) -> Result<Replay, String> {
    let ss = log.sector_size as u64;
    let per = BLOCK_SIZE as u64 / ss;
    let mut r = Replay { events: Vec::new(), at: vec![0] };
    for (i, e) in log.entries.iter().enumerate() {
        if e.flags & MARK != 0 {
            continue;
        }
        if e.nr_sectors > 0 {
            if e.sector % per != 0 || e.nr_sectors % per != 0 {
                return Err(format!("entry {i}: sectors {}+{} are not whole 4 KiB blocks", e.sector, e.nr_sectors));
            }
            for k in 0..e.nr_sectors / per {
                let block = e.sector / per + k;
                let mut data = [0u8; BLOCK_SIZE];
                if e.flags & DISCARD == 0 {
                    let off = (k as usize) * BLOCK_SIZE;
                    data.copy_from_slice(e.data.get(off..off + BLOCK_SIZE).ok_or("short data")?);
                }
                if block >= skip {
                    r.events.push(Event::Write { block: block - skip, data: Box::new(data) });
                }
                if e.flags & DISCARD == 0 {
                    r.at.push(r.events.len());
                }
            }
        }
        if e.flags & FLUSH != 0 {
            r.events.push(Event::Flush);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(block: u64, blocks: u64, fill: u8, ss: usize) -> Entry {
        let per = (BLOCK_SIZE / ss) as u64;
        Entry {
            sector: block * per,
            nr_sectors: blocks * per,
            flags: 0,
            data: vec![fill; blocks as usize * BLOCK_SIZE],
        }
    }

    fn flush() -> Entry {
        Entry { sector: 0, nr_sectors: 0, flags: FLUSH, data: Vec::new() }
    }

    #[test]
    fn a_log_round_trips_with_every_kind_of_entry() {
        for ss in [512, 4096] {
            let mark = Entry { sector: 0, nr_sectors: 0, flags: MARK, data: b"workload 3".to_vec() };
            let discard = Entry {
                sector: 8 * (BLOCK_SIZE / ss) as u64,
                nr_sectors: (BLOCK_SIZE / ss) as u64,
                flags: DISCARD,
                data: vec![],
            };
            let mut fua = write(5, 1, 9, ss);
            fua.flags = FUA;
            let log = Log { sector_size: ss, entries: vec![write(70, 2, 1, ss), flush(), mark, fua, discard, flush()] };
            assert_eq!(parse(&encode(&log)), Ok(log));
        }
    }

    #[test]
    fn events_split_blocks_drop_the_catalogue_and_count_like_the_kernel() {
        let mark = Entry { sector: 0, nr_sectors: 0, flags: MARK, data: b"m".to_vec() };
        let log = Log { sector_size: 4096, entries: vec![write(3, 1, 7, 4096), write(64, 2, 1, 4096), mark, flush()] };
        let r = to_events(&parse(&encode(&log)).unwrap(), 64).unwrap();
        // Block 3 is the catalogue's: counted, not replayed.
        assert_eq!(r.at, vec![0, 0, 1, 2]);
        assert!(matches!(&r.events[0], Event::Write { block: 0, data } if data[0] == 1));
        assert!(matches!(&r.events[1], Event::Write { block: 1, .. }));
        assert!(matches!(r.events[2], Event::Flush));
    }

    #[test]
    fn damaged_logs_are_refused() {
        let log = Log { sector_size: 4096, entries: vec![write(70, 1, 1, 4096), flush()] };
        let good = encode(&log);
        let mut bad_magic = good.clone();
        bad_magic[0] ^= 1;
        assert!(parse(&bad_magic).is_err());
        assert!(parse(&good[..good.len() - 100]).is_err(), "truncated data");
        let mut bad_flags = good.clone();
        bad_flags[4096 + 16] = 0x80;
        assert!(parse(&bad_flags).is_err());
        let mut bad_size = good.clone();
        bad_size[24..28].copy_from_slice(&1000u32.to_le_bytes());
        assert!(parse(&bad_size).is_err());
        let mut more = good;
        more[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse(&more).is_err(), "entry count past the end");
        let odd =
            Log { sector_size: 512, entries: vec![Entry { sector: 1, nr_sectors: 8, flags: 0, data: vec![0; 4096] }] };
        assert!(to_events(&odd, 0).is_err(), "write not on a block boundary");
    }
}
