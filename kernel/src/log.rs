//! The kernel's logging facade: the `log` crate's macros, printed on the
//! serial console as `[level] message`.

use crate::arch::serial;
use core::fmt::{self, Write};
use log::{LevelFilter, Metadata, Record};

/// A `fmt::Write` onto the serial console. Lock-free: the kernel runs with
/// interrupts off on one CPU, and the panic handler must never wait.
pub struct Console;

impl Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        serial::write(s.as_bytes());
        Ok(())
    }
}

struct Logger;

impl log::Log for Logger {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &Record<'_>) {
        let level = match record.level() {
            log::Level::Error => "error",
            log::Level::Warn => "warn",
            log::Level::Info => "info",
            log::Level::Debug => "debug",
            log::Level::Trace => "trace",
        };
        let _ = writeln!(Console, "[{level}] {}", record.args());
    }

    fn flush(&self) {}
}

static LOGGER: Logger = Logger;

/// Installs the logger at `level`.
pub fn init(level: LevelFilter) {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

/// Prints to the console without a level prefix.
#[macro_export]
macro_rules! kprintln {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let _ = writeln!($crate::log::Console, $($arg)*);
    }};
}
