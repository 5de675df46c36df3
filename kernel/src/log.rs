//! The kernel's logging facade: the `log` crate's macros, printed on the
//! serial console as `[level] message`.
//!
//! What is printed is chosen on the command line by `log=`: a level for
//! everything (`log=info`) and levels for single subsystems after commas
//! (`log=warn,sched=debug,env=info`). A subsystem is a kernel module: a
//! record's target (`oxok_kernel::calls::env`) matches a name if any of its
//! path segments after the crate is that name. The default is `warn`, so an
//! interactive console shows only what programs print; the test harness asks
//! for `log=info` explicitly.
//!
//! Each record is formatted whole and written at a line boundary of the
//! console (`crate::logline`): never inside a line a program is writing.

use core::fmt::Write;
use log::{LevelFilter, Metadata, Record};

/// The level when the command line names none.
pub const DEFAULT_LEVEL: LevelFilter = LevelFilter::Warn;
/// Subsystem levels kept (more are ignored with a warning).
const MAX_RULES: usize = 8;
/// Longest subsystem name kept.
const NAME_MAX: usize = 16;

/// One `subsystem=level` rule.
#[derive(Clone, Copy)]
struct Rule {
    name: [u8; NAME_MAX],
    len: usize,
    level: LevelFilter,
}

/// The parsed `log=` word: a default level and per-subsystem levels.
/// Fixed size, because it is read before the heap exists.
#[derive(Clone, Copy)]
pub struct Filter {
    default: LevelFilter,
    rules: [Rule; MAX_RULES],
    count: usize,
    /// Parts of the word that were not understood (reported once the logger runs).
    rejected: usize,
}

impl Filter {
    /// Parses the last `log=` word of `line` (none: [`DEFAULT_LEVEL`]).
    pub fn parse(line: &str) -> Filter {
        let empty = Rule { name: [0; NAME_MAX], len: 0, level: LevelFilter::Off };
        let mut f = Filter { default: DEFAULT_LEVEL, rules: [empty; MAX_RULES], count: 0, rejected: 0 };
        let Some(spec) = line.split_whitespace().filter_map(|w| w.strip_prefix("log=")).next_back() else {
            return f;
        };
        for part in spec.split(',').filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                None => match part.parse() {
                    Ok(level) => f.default = level,
                    Err(_) => f.rejected += 1,
                },
                Some((name, level)) => match level.parse() {
                    Ok(level) if !name.is_empty() && name.len() <= NAME_MAX && f.count < MAX_RULES => {
                        let rule = &mut f.rules[f.count];
                        rule.name[..name.len()].copy_from_slice(name.as_bytes());
                        rule.len = name.len();
                        rule.level = level;
                        f.count += 1;
                    }
                    _ => f.rejected += 1,
                },
            }
        }
        f
    }

    /// The most verbose level any rule asks for (the `log` crate's gate).
    pub fn max(&self) -> LevelFilter {
        self.rules[..self.count].iter().map(|r| r.level).fold(self.default, core::cmp::max)
    }

    /// The level for records of `target` (a module path).
    pub fn level_for(&self, target: &str) -> LevelFilter {
        let mut level = self.default;
        for rule in &self.rules[..self.count] {
            let name = &rule.name[..rule.len];
            if target.split("::").skip(1).any(|seg| seg.as_bytes() == name) {
                level = rule.level;
            }
        }
        level
    }
}

struct Logger;

static FILTER: spin::Once<Filter> = spin::Once::new();

impl log::Log for Logger {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        FILTER.get().is_none_or(|f| m.level() <= f.level_for(m.target()))
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let level = match record.level() {
            log::Level::Error => "error",
            log::Level::Warn => "warn",
            log::Level::Info => "info",
            log::Level::Debug => "debug",
            log::Level::Trace => "trace",
        };
        let _ = writeln!(crate::logline::Line::new(), "[{level}] {}", record.args());
    }

    fn flush(&self) {}
}

static LOGGER: Logger = Logger;

/// Installs the logger with the `log=` word of the command line `line`.
pub fn init(line: &str) {
    let filter = *FILTER.call_once(|| Filter::parse(line));
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(filter.max());
    }
    if filter.rejected > 0 {
        log::warn!(
            "cmdline: {} part(s) of log= not understood (levels: off error warn info debug trace)",
            filter.rejected
        );
    }
}

/// Prints one line to the console without a level prefix (at a line
/// boundary of the console, as the log does).
#[macro_export]
macro_rules! kprintln {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let _ = writeln!($crate::logline::Line::new(), $($arg)*);
    }};
}
