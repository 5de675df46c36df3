//! `cargo xtask icount --pages`: the pages a command touches between two
//! address-space switches.
//!
//! Under QEMU's TCG every write of CR3 empties the emulated TLB and the
//! jump cache, so after a switch each page the guest touches is walked
//! again and each indirect branch looks its target up again: what a
//! switch costs in wall time grows with the pages touched before the next
//! one, which instruction counts do not show. The count plugin
//! (`xtask/plugin/tbcount.c`, argument `pages=FILE`) counts, per stretch
//! between two CR3 writes, the distinct pages of code run and of data
//! loaded or stored, the kernel's and user pages apart; this reads its
//! sums and prints what the command added per switch.

/// What the plugin wrote for one boot: the switches that ended a stretch
/// with any page touched, and the sums over those stretches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pages {
    pub switches: u64,
    /// Kernel code, kernel data, user code, user data.
    pub pages: [u64; 4],
}

/// Parses `switches N` and `pages KC KD UC UD`.
pub(crate) fn parse(text: &str) -> Result<Pages, String> {
    let mut p = Pages::default();
    let num = |s: &str| s.parse::<u64>().map_err(|_| format!("bad pages line: `{text}`"));
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[..] {
            ["switches", n] => p.switches = num(n)?,
            ["pages", a, b, c, d] => p.pages = [num(a)?, num(b)?, num(c)?, num(d)?],
            [] => {}
            _ => return Err(format!("bad pages line `{line}`")),
        }
    }
    Ok(p)
}

/// The lines `cargo xtask icount --pages` prints: the switches the command
/// added and the pages each stretch touched on average.
pub(crate) fn render(with: &Pages, without: &Pages) -> String {
    let switches = with.switches.saturating_sub(without.switches);
    if switches == 0 {
        return "address-space switches: none added by the command\n".to_string();
    }
    let each = |i: usize| with.pages[i].saturating_sub(without.pages[i]) as f64 / switches as f64;
    let total: f64 = (0..4).map(each).sum();
    format!(
        "address-space switches: {switches}; distinct pages touched between two, on average: {total:.1} \
         (kernel code {:.1}, kernel data {:.1}, user code {:.1}, user data {:.1})\n",
        each(0),
        each(1),
        each(2),
        each(3)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders_what_the_command_added() {
        let with = parse("switches 4345\npages 85415 137763 128675 128556\n").unwrap();
        let without = parse("switches 47\npages 1128 3221 433 1189\n").unwrap();
        assert_eq!(with.switches, 4345);
        let text = render(&with, &without);
        assert!(
            text.starts_with("address-space switches: 4298; distinct pages touched between two, on average: 110.4"),
            "{text}"
        );
        assert!(text.contains("kernel code 19.6, kernel data 31.3"), "{text}");
        assert!(render(&without, &without).contains("none added"));
        assert!(parse("pages 1 2\n").is_err());
        assert!(parse("switches x\n").is_err());
    }
}
