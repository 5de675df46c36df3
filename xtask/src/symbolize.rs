//! Symbolised backtraces: the kernel's panic backtrace and a program's
//! backtrace (printed by the libOS when the program ends for a fault
//! nobody handled, `libos/src/backtrace.rs`) carry raw addresses; this adds
//! each one's function and offset, read from the ELF symbol tables of
//! `kernel.elf` and of the programs in the boot archive (they keep their
//! `.symtab`). Used on scenario logs, on `cargo xtask run`'s console, and
//! by `cargo xtask symbolize LOG`.
//!
//! Recognised lines: the kernel's `env ID (NAME) destroyed: … rip=0x…`
//! (its `rip` gets the function); `backtrace (return addresses):` (the kernel's) or
//! `backtrace (program NAME):` starts a block; each following
//! `  #N: 0xADDR` line gets `  NAME+0xOFF` appended; any other line ends
//! the block. A return address is looked up one byte back, so a call at
//! the very end of a function names that function; frame #0 of a program
//! is its `rip` and is looked up as it is.

use crate::profile::symbols::Table;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which image a backtrace block belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Image {
    Kernel,
    Program(String),
}

/// Symbol tables, loaded the first time a backtrace needs one.
pub(crate) struct Symbolizer {
    kernel: PathBuf,
    initrd: PathBuf,
    tables: HashMap<Image, Option<Table>>,
}

impl Symbolizer {
    /// A symboliser over the kernel ELF and the boot archive at these paths.
    pub(crate) fn new(kernel: &Path, initrd: &Path) -> Symbolizer {
        Symbolizer { kernel: kernel.to_path_buf(), initrd: initrd.to_path_buf(), tables: HashMap::new() }
    }

    fn table(&mut self, image: &Image) -> Option<&Table> {
        if !self.tables.contains_key(image) {
            let elf = match image {
                Image::Kernel => std::fs::read(&self.kernel).ok(),
                Image::Program(name) => std::fs::read(&self.initrd)
                    .ok()
                    .and_then(|tar| oxok_archive::Archive::new(&tar).find(name).map(<[u8]>::to_vec)),
            };
            let table = elf.and_then(|e| Table::from_elf(&e).ok());
            self.tables.insert(image.clone(), table);
        }
        self.tables.get(image).and_then(Option::as_ref)
    }

    /// `text` with every backtrace line symbolised (other lines unchanged).
    pub(crate) fn annotate(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut lines = Lines::default();
        for line in text.split_inclusive('\n') {
            let body = line.trim_end_matches(['\n', '\r']);
            let end = &line[body.len()..];
            out.push_str(body);
            if let Some(note) = lines.note(self, body) {
                out.push_str(&note);
            }
            out.push_str(end);
        }
        out
    }
}

/// The state between lines: the block we are in, if any.
#[derive(Default)]
pub(crate) struct Lines {
    block: Option<Image>,
}

impl Lines {
    /// What to append to `line` (without its newline), if anything.
    pub(crate) fn note(&mut self, symbols: &mut Symbolizer, line: &str) -> Option<String> {
        let t = line.trim_start_matches(|c: char| c.is_ascii_control());
        if let Some(image) = block_start(t) {
            self.block = Some(image);
            return None;
        }
        if let Some((name, rip)) = destroyed_at(t) {
            self.block = None;
            let sym = symbols.table(&Image::Program(name.to_string()))?.lookup(rip)?;
            return Some(format!("  [rip in {}+{:#x}]", sym.name, rip - sym.addr));
        }
        let image = self.block.clone()?;
        let Some((index, addr)) = frame_line(t) else {
            self.block = None;
            return None;
        };
        let probe = if index == 0 && image != Image::Kernel { addr } else { addr.saturating_sub(1) };
        let sym = symbols.table(&image)?.lookup(probe)?;
        Some(format!("  {}+{:#x}", sym.name, addr - sym.addr))
    }
}

/// The image a backtrace header line names.
fn block_start(line: &str) -> Option<Image> {
    if line.contains("backtrace (return addresses):") {
        return Some(Image::Kernel);
    }
    let rest = line.split("backtrace (program ").nth(1)?;
    let name = rest.strip_suffix("):")?;
    (!name.is_empty()).then(|| Image::Program(name.to_string()))
}

/// The kernel's `env ID (NAME) destroyed: … at rip=0xADDR …` line (a
/// program ended by the kernel, with no handler to print a backtrace) →
/// `(NAME, ADDR)`.
fn destroyed_at(line: &str) -> Option<(&str, u64)> {
    let (head, rest) = line.split_once(") destroyed: ")?;
    let name = head.rsplit_once(" (")?.1;
    let hex = rest.split("rip=0x").nth(1)?;
    let end = hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len());
    Some((name, u64::from_str_radix(&hex[..end], 16).ok()?))
}

/// `  #N: 0xADDR` → `(N, ADDR)`.
fn frame_line(line: &str) -> Option<(u32, u64)> {
    let rest = line.trim_start().strip_prefix('#')?;
    let (n, addr) = rest.split_once(": ")?;
    let addr = addr.trim().strip_prefix("0x")?;
    Some((n.parse().ok()?, u64::from_str_radix(addr, 16).ok()?))
}

/// `cargo xtask symbolize LOG…`: prints each log with its backtraces
/// symbolised against the images of the last build.
pub(crate) fn run(ws: &crate::meta::Workspace, logs: &[String]) -> Result<(), String> {
    if logs.is_empty() {
        return Err("usage: cargo xtask symbolize LOG... (a serial log with a backtrace)".into());
    }
    let out = ws.out_dir();
    let mut s = Symbolizer::new(&out.join("kernel.elf"), &out.join("initrd.tar"));
    for log in logs {
        let text = std::fs::read(log).map_err(|e| format!("cannot read {log}: {e}"))?;
        print!("{}", s.annotate(&String::from_utf8_lossy(&text)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_blocks_and_frames() {
        assert_eq!(block_start("backtrace (return addresses):"), Some(Image::Kernel));
        assert_eq!(block_start("backtrace (program hostile-x):"), Some(Image::Program("hostile-x".into())));
        assert_eq!(block_start("backtrace (program ):"), None);
        assert_eq!(block_start("no backtrace here"), None);
        assert_eq!(frame_line("  #0: 0x0000000000401234"), Some((0, 0x401234)));
        assert_eq!(frame_line("  #12: 0xffffffff80001000"), Some((12, 0xffff_ffff_8000_1000)));
        assert_eq!(frame_line("  #x: 0x10"), None);
        assert_eq!(frame_line("hello"), None);
        assert_eq!(
            destroyed_at("[info] env 1027 (upcalls) destroyed: page fault at rip=0x4017f0 (error 0x6): write"),
            Some(("upcalls", 0x4017f0))
        );
        assert_eq!(destroyed_at("env 1027 (x) exited"), None);
    }

    #[test]
    fn annotates_a_program_backtrace_from_the_archive() {
        // A fake archive holding this test binary's own ELF as `me`: its
        // symbol table is real, so a symbol it lists must come back.
        let exe = std::env::current_exe().unwrap();
        let elf = std::fs::read(&exe).unwrap();
        let table = Table::from_elf(&elf).unwrap();
        let (addr, name) = table.any_sized().unwrap();
        let dir = std::env::temp_dir().join(format!("oxok-symbolize-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut tar = Vec::new();
        oxok_archive::append(&mut tar, "me", &elf).unwrap();
        oxok_archive::finish(&mut tar);
        std::fs::write(dir.join("initrd.tar"), &tar).unwrap();
        let mut s = Symbolizer::new(&dir.join("none.elf"), &dir.join("initrd.tar"));
        let log = format!(
            "upcall: unhandled page fault\nbacktrace (program me):\n  #0: {addr:#018x}\n  #1: {:#018x}\nnext line\n  #2: 0x10\n",
            addr + 1
        );
        let out = s.annotate(&log);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], format!("  #0: {addr:#018x}  {name}+0x0"));
        assert_eq!(lines[3], format!("  #1: {:#018x}  {name}+0x1", addr + 1));
        // Outside a block nothing changes; a missing kernel gives no note.
        assert_eq!(lines[5], "  #2: 0x10");
        assert_eq!(
            s.annotate("backtrace (return addresses):\n  #0: 0x1000\n"),
            "backtrace (return addresses):\n  #0: 0x1000\n"
        );
        // The terminal path: the same notes, whatever the chunking, with
        // `\r\n` line ends and output that is not a line yet passed on.
        let console = format!("oxok$ x\r\nbacktrace (program me):\r\n  #0: {addr:#x}\r\noxok$ ");
        for size in [1, 3, 7, 4096] {
            let mut input = Chunks { data: console.as_bytes(), size };
            let mut out = Vec::new();
            crate::proc::copy_symbolized(
                &mut input,
                &mut out,
                Symbolizer::new(&dir.join("none.elf"), &dir.join("initrd.tar")),
            );
            let want = format!("oxok$ x\r\nbacktrace (program me):\r\n  #0: {addr:#x}  {name}+0x0\r\noxok$ ");
            assert_eq!(String::from_utf8_lossy(&out), want, "chunks of {size}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A reader giving `data` `size` bytes at a time.
    struct Chunks<'a> {
        data: &'a [u8],
        size: usize,
    }

    impl std::io::Read for Chunks<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.size.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }
}
