//! HTTP dates (RFC 9110 §5.6.7): Unix seconds to and from the preferred
//! form `Sun, 06 Nov 1994 08:49:37 GMT`, and from the two obsolete forms a
//! recipient must still accept (`Sunday, 06-Nov-94 08:49:37 GMT` and
//! asctime's `Sun Nov  6 08:49:37 1994`).

use alloc::vec::Vec;

/// Bytes of a formatted date.
pub const LEN: usize = 29;

const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
const LONG_DAYS: [&[u8]; 7] = [b"Sunday", b"Monday", b"Tuesday", b"Wednesday", b"Thursday", b"Friday", b"Saturday"];
const MONTHS: [&[u8; 3]; 12] =
    [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];
/// Latest second formatted: 9999-12-31 23:59:59 (later times are clamped).
const MAX_SECS: u64 = 253_402_300_799;

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
/// Years are counted from March so that the leap day ends the year.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // 0..=399
    let m = i64::from(month);
    let mp = if m > 2 { m - 3 } else { m + 9 }; // March = 0
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month 1–12, day 1–31) of a day count from 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Formats Unix seconds as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub fn format(secs: u64) -> [u8; LEN] {
    let secs = secs.min(MAX_SECS);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    let wd = (days + 4).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
    let mut out = [0u8; LEN];
    out[..3].copy_from_slice(DAYS[wd]);
    out[3..5].copy_from_slice(b", ");
    two(&mut out[5..7], d);
    out[7] = b' ';
    out[8..11].copy_from_slice(MONTHS[(m - 1) as usize]);
    out[11] = b' ';
    let y = y as u32;
    two(&mut out[12..14], y / 100);
    two(&mut out[14..16], y % 100);
    out[16] = b' ';
    two(&mut out[17..19], (rem / 3600) as u32);
    out[19] = b':';
    two(&mut out[20..22], (rem / 60 % 60) as u32);
    out[22] = b':';
    two(&mut out[23..25], (rem % 60) as u32);
    out[25..].copy_from_slice(b" GMT");
    out
}

/// Appends [`format`]`(secs)` to `out`.
pub fn format_into(out: &mut Vec<u8>, secs: u64) {
    out.extend_from_slice(&format(secs));
}

fn two(out: &mut [u8], v: u32) {
    out[0] = b'0' + (v / 10 % 10) as u8;
    out[1] = b'0' + (v % 10) as u8;
}

/// Parses any of the three HTTP date forms into Unix seconds. `None` for
/// anything malformed or before 1970 (a recipient ignores such a date).
pub fn parse(s: &[u8]) -> Option<u64> {
    parse_imf(s).or_else(|| parse_rfc850(s)).or_else(|| parse_asctime(s))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn parse_imf(s: &[u8]) -> Option<u64> {
    if s.len() != LEN || &s[3..5] != b", " || s[7] != b' ' || s[11] != b' ' || s[16] != b' ' || &s[25..] != b" GMT" {
        return None;
    }
    day_name(&s[..3])?;
    let day = digits(&s[5..7])?;
    let month = month(&s[8..11])?;
    let year = digits(&s[12..16])?;
    to_secs(i64::from(year), month, day, &s[17..25])
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`
fn parse_rfc850(s: &[u8]) -> Option<u64> {
    let comma = s.iter().position(|&c| c == b',')?;
    if !LONG_DAYS.iter().any(|d| d.eq_ignore_ascii_case(&s[..comma])) {
        return None;
    }
    let r = &s[comma..];
    if r.len() != 24 || &r[..2] != b", " || r[4] != b'-' || r[8] != b'-' || r[11] != b' ' || &r[20..] != b" GMT" {
        return None;
    }
    let day = digits(&r[2..4])?;
    let month = month(&r[5..8])?;
    let yy = digits(&r[9..11])?;
    // Two-digit years: 70–99 are 19xx, 00–69 are 20xx (this server has no
    // clock to apply RFC 9110's "50 years in the future" rule against).
    let year = if yy >= 70 { 1900 + yy } else { 2000 + yy };
    to_secs(i64::from(year), month, day, &r[12..20])
}

/// `Sun Nov  6 08:49:37 1994`
fn parse_asctime(s: &[u8]) -> Option<u64> {
    if s.len() != 24 || s[3] != b' ' || s[7] != b' ' || s[10] != b' ' || s[19] != b' ' {
        return None;
    }
    day_name(&s[..3])?;
    let month = month(&s[4..7])?;
    let day = if s[8] == b' ' { digits(&s[9..10])? } else { digits(&s[8..10])? };
    let year = digits(&s[20..24])?;
    to_secs(i64::from(year), month, day, &s[11..19])
}

fn to_secs(year: i64, month: u32, day: u32, hms: &[u8]) -> Option<u64> {
    if hms.len() != 8 || hms[2] != b':' || hms[5] != b':' {
        return None;
    }
    let (h, mi, se) = (digits(&hms[..2])?, digits(&hms[3..5])?, digits(&hms[6..8])?);
    if year < 1970 || day == 0 || day > days_in_month(year, month) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(se.min(59));
    u64::try_from(secs).ok()
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0')))
}

fn day_name(s: &[u8]) -> Option<()> {
    DAYS.iter().any(|d| d.eq_ignore_ascii_case(s)).then_some(())
}

fn month(s: &[u8]) -> Option<u32> {
    MONTHS.iter().position(|m| m.eq_ignore_ascii_case(s)).map(|i| i as u32 + 1)
}
