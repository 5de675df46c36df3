//! The CMOS real-time clock, read once at boot for the wall-clock time the
//! clock page exposes (`Clock::boot_unix`); everything after that is the
//! TSC. The RTC keeps UTC under QEMU (`-rtc base=utc`, the default).

use super::cpu::{inb, outb};

const INDEX: u16 = 0x70;
const DATA: u16 = 0x71;
/// Index bit that keeps NMIs disabled while the index is set.
const NMI_OFF: u8 = 0x80;

/// A calendar date and time of day, as the RTC shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    pub year: u32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

fn register(index: u8) -> u8 {
    outb(INDEX, NMI_OFF | index);
    inb(DATA)
}

fn update_in_progress() -> bool {
    register(0x0a) & 0x80 != 0
}

fn raw() -> [u8; 7] {
    [register(0x00), register(0x02), register(0x04), register(0x07), register(0x08), register(0x09), register(0x32)]
}

/// Reads the RTC: waits (a bounded number of polls) for no update to be in
/// progress, then reads until two reads agree. `None` if it never settles
/// or shows an impossible date. An update keeps the flag set for about
/// 2 ms a second; 1,000 polls could all fall inside it on a loaded
/// emulator (a boot then read the wall clock as 1970), so the bound is
/// far above any update's length and still ends the loop.
pub fn read() -> Option<DateTime> {
    const POLLS: u32 = 1_000_000;
    let mut last = None;
    for _ in 0..POLLS {
        if update_in_progress() {
            continue;
        }
        let now = raw();
        if last == Some(now) {
            return decode(now, register(0x0b));
        }
        last = Some(now);
    }
    None
}

/// The registers (sec, min, hour, day, month, year, century) under status
/// register B's format bits: BCD unless bit 2, 12-hour unless bit 1.
pub fn decode(r: [u8; 7], status_b: u8) -> Option<DateTime> {
    let binary = status_b & 0x04 != 0;
    let bcd = |v: u8| if binary { u32::from(v) } else { u32::from(v & 0x0f) + u32::from(v >> 4) * 10 };
    let pm = status_b & 0x02 == 0 && r[2] & 0x80 != 0;
    let mut hour = bcd(r[2] & 0x7f);
    if status_b & 0x02 == 0 {
        hour %= 12;
        if pm {
            hour += 12;
        }
    }
    let century = match bcd(r[6]) {
        c @ 19..=30 => c,
        _ => 20,
    };
    let t = DateTime {
        year: century * 100 + bcd(r[5]),
        month: bcd(r[4]),
        day: bcd(r[3]),
        hour,
        minute: bcd(r[1]),
        second: bcd(r[0]),
    };
    let valid =
        (1..=12).contains(&t.month) && (1..=31).contains(&t.day) && t.hour < 24 && t.minute < 60 && t.second < 61;
    valid.then_some(t)
}

/// Seconds since 1970-01-01 00:00:00 UTC (dates from 1970 on), by the
/// days-from-civil count of the proleptic Gregorian calendar.
pub fn unix_seconds(t: &DateTime) -> u64 {
    let (y, m) = if t.month <= 2 { (i64::from(t.year) - 1, t.month + 9) } else { (i64::from(t.year), t.month - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * i64::from(m) + 2) / 5 + i64::from(t.day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + i64::from(t.hour) * 3600 + i64::from(t.minute) * 60 + i64::from(t.second);
    u64::try_from(secs).unwrap_or(0)
}
