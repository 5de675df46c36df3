//! `cargo xtask icount`: every guest instruction a shell command costs,
//! counted exactly and attributed to functions.
//!
//! Oxok boots (`run=init`) twice under QEMU TCG with a plugin of ours
//! (`xtask/plugin/tbcount.c`, built with the host's C compiler) that counts
//! how often each translation block runs: once with the command typed at the
//! shell, once with only `exit 0`. The difference, block by block, is what
//! the command cost — its programs, the libOS in them, the Linux personality
//! and the kernel's work for them — and every block's instructions go to the
//! function its address lies in: the kernel's symbols above the user half,
//! the Linux personality's in its range, and below that the symbols of the
//! programs `--program NAME[,NAME…]` names (from the boot archive) or none;
//! where two programs lie at the same addresses (a native one and a Linux
//! one), a block goes to the program whose bytes it begins with. Unlike
//! `cargo xtask profile`, which samples host time, this counts instructions
//! (what `bench --mode icount` reports), so a function's share is exact.

use crate::deps::{self, Need};
use crate::meta::Workspace;
use crate::profile::symbols::Table;
use crate::profile::table::{Layer, kernel_layer, user_layer};
use crate::progimage::Image;
use crate::qemu::Qemu;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The usage text.
pub(crate) const USAGE: &str = "\
usage: cargo xtask icount [--top N] [--program NAME] [--timeout SECS] [--disk MIB] [--pages] COMMAND...
       cargo xtask icount [--top N] [--program NAME] [--per N] --diff WITH WITHOUT

Boots Oxok twice under QEMU TCG with an instruction-counting plugin: once
typing COMMAND at the shell, once not. Prints, per function, the guest
instructions COMMAND cost (the difference of the two boots) and how often
the function was entered, then the totals by layer.
  --top N          functions listed (default 40)
  --program NAME[,NAME...]
                   resolve user addresses below the Linux personality with
                   the symbols of these programs from the boot archive
                   (default: none; a shell, a native program and a Linux
                   program may all lie there: a block goes to the first
                   program whose bytes at its address are the block's, a
                   Linux program's functions to the layer `Linux program`)
  --timeout SECS   give up on a boot after SECS (default 600)
  --disk MIB       both boots get a blank virtio-blk disk of MIB MiB (as
                   `bench --disk`: init starts dfsd, which makes C-FFS on it)
  --pages          also count the address-space switches COMMAND made and
                   the distinct pages it touched between two (each switch
                   empties QEMU's TLB; the boots run several times slower);
                   each boot's `.pagelist` beside its counts lists every
                   page (address, 0 code or 1 data, stretches that touched
                   it), to say which pages a stretch walks again
  --diff WITH WITHOUT
                   boot nothing: attribute the difference of two counts the
                   plugin wrote elsewhere (`cargo xtask bench --http
                   --counts` writes one per Oxok boot)
  --per N          divide every figure by N (e.g. the round trips WITH made
                   more than WITHOUT)
Example: cargo xtask icount lx-bench-sh
";

/// The Linux personality's ELF in the boot archive.
const PERSONALITY: &str = "linux";

/// Parsed options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub command: String,
    pub top: usize,
    /// The programs user addresses are named by.
    pub programs: Vec<String>,
    pub timeout: Duration,
    /// Two count files to compare instead of two boots.
    pub diff: Option<(PathBuf, PathBuf)>,
    /// The divisor of every figure.
    pub per: u64,
    /// A blank disk of this many MiB for each boot.
    pub disk: Option<u64>,
    /// Count the pages touched between address-space switches.
    pub pages: bool,
}

impl Options {
    pub(crate) fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            command: String::new(),
            top: 40,
            programs: Vec::new(),
            timeout: Duration::from_secs(600),
            diff: None,
            per: 1,
            disk: None,
            pages: false,
        };
        let mut words = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
            match a.as_str() {
                "--top" => o.top = value()?.parse().map_err(|_| "--top takes a number".to_string())?,
                "--program" => o.programs.extend(value()?.split(',').filter(|p| !p.is_empty()).map(String::from)),
                "--timeout" => {
                    let s: u64 = value()?.parse().map_err(|_| "--timeout takes seconds".to_string())?;
                    o.timeout = Duration::from_secs(s.max(1));
                }
                "--diff" => {
                    let with = value()?;
                    o.diff = Some((with.into(), value()?.into()));
                }
                "--disk" => o.disk = Some(value()?.parse().map_err(|_| "--disk takes MiB".to_string())?),
                "--pages" => o.pages = true,
                "--per" => o.per = value()?.parse::<u64>().map_err(|_| "--per takes a number".to_string())?.max(1),
                w if w.starts_with("--") && words.is_empty() => return Err(format!("unknown option {w}\n{USAGE}")),
                w => words.push(w.to_string()),
            }
        }
        if let Some((with, without)) = &o.diff {
            if !words.is_empty() {
                return Err(format!("--diff compares two files; no command\n{USAGE}"));
            }
            o.command = format!("{} minus {}", with.display(), without.display());
            return Ok(o);
        }
        if words.is_empty() {
            return Err(format!("which command? e.g. `cargo xtask icount lx-bench-sh`\n{USAGE}"));
        }
        o.command = words.join(" ");
        Ok(o)
    }
}

/// Runs `cargo xtask icount <args>`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return Ok(());
    }
    let opts = Options::parse(args)?;
    let ws = Workspace::load()?;
    deps::ensure(&ws, &[Need::RustTarget, Need::Qemu])?;
    let images = crate::build::build_images(&ws)?;
    let (kernel, tar) = crate::profile::symbols::boot_files(&images.kernel, &images.initrd)?;
    let archive = oxok_archive::Archive::new(&tar);
    let elf = |name: &str| archive.find(name).ok_or(format!("the boot archive has no `{name}`"));
    let personality = Table::from_elf(elf(PERSONALITY)?).map_err(|e| format!("{PERSONALITY}: {e}"))?;
    let programs = opts
        .programs
        .iter()
        .map(|name| Image::from_elf(elf(name)?).map_err(|e| format!("{name}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;

    let (with, without) = match &opts.diff {
        Some((with, without)) => (counts_file(with)?, counts_file(without)?),
        None => {
            let plugin = build_plugin(&ws)?;
            let dir = ws.log_dir();
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let typed = format!("{}\nexit 0\n", opts.command);
            let with = boot(&images, &plugin, &dir.join("icount-with"), &typed, &opts)?;
            (with, boot(&images, &plugin, &dir.join("icount-without"), "exit 0\n", &opts)?)
        }
    };
    let syms = Symbols { kernel: &kernel, personality: &personality, programs: &programs };
    let rows = per(attribute(&with, &without, &syms), opts.per);
    print!("{}", render(&opts.command, &rows, opts.top));
    if opts.per > 1 {
        println!("(every figure divided by {})", opts.per);
    }
    if opts.pages && opts.diff.is_none() {
        let dir = ws.log_dir();
        let read = |stem: &str| {
            let path = dir.join(stem).with_extension("pages");
            std::fs::read_to_string(&path)
                .map_err(|e| format!("the plugin wrote no {}: {e}", path.display()))
                .and_then(|t| crate::switchpages::parse(&t))
        };
        print!("{}", crate::switchpages::render(&read("icount-with")?, &read("icount-without")?));
    }
    Ok(())
}

/// A count file the plugin wrote.
fn counts_file(path: &Path) -> Result<Counts, String> {
    parse(&std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?)
}

/// Every figure divided by `n` (rounded towards zero), rows re-sorted.
pub(crate) fn per(mut rows: Vec<Row>, n: u64) -> Vec<Row> {
    let n = n.max(1) as i64;
    for r in &mut rows {
        r.instructions /= n;
        r.entries /= n;
    }
    sort(&mut rows);
    rows
}

/// QEMU's arguments loading the plugin, its counts written to `out`.
pub(crate) fn plugin_args(plugin: &Path, out: &Path) -> [String; 2] {
    ["-plugin".to_string(), format!("{},out={}", plugin.display(), out.display())]
}

/// [`plugin_args`], the pages between switches also counted, into `pages`
/// ([`crate::switchpages`]).
fn plugin_args_pages(plugin: &Path, out: &Path, pages: &Path) -> [String; 2] {
    let [flag, arg] = plugin_args(plugin, out);
    let list = pages.with_extension("pagelist");
    [flag, format!("{arg},pages={},pagelist={}", pages.display(), list.display())]
}

/// Compiles the plugin into `<target>/oxok/tbcount.so` when its source is
/// newer.
pub(crate) fn build_plugin(ws: &Workspace) -> Result<PathBuf, String> {
    let src = ws.root.join("xtask/plugin/tbcount.c");
    let out = ws.out_dir().join("tbcount.so");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&out).is_some() && modified(&out) >= modified(&src) {
        return Ok(out);
    }
    let status = Command::new("cc")
        .args(["-O2", "-Wall", "-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .map_err(|e| format!("cannot run the C compiler `cc` for the plugin: {e} (install gcc)"))?;
    if !status.success() {
        return Err(format!("building {} failed", src.display()));
    }
    Ok(out)
}

/// Instructions and entries per block, summed over translations.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Counts {
    /// (Address, first bytes as the plugin packs them; 0 from a plugin
    /// that wrote none) → (instructions run, times the block ran).
    pub blocks: HashMap<(u64, u64), (u64, u64)>,
}

/// Parses the plugin's output (`vaddr insns count sig` lines, the
/// signature absent from older counts; `# dropped N`).
pub(crate) fn parse(text: &str) -> Result<Counts, String> {
    let mut c = Counts::default();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("# dropped ") {
            match n.trim() {
                "0" => continue,
                n => return Err(format!("the plugin's table was full: {n} blocks were not counted")),
            }
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let (addr, insns, runs, sig) = match f[..] {
            [addr, insns, runs] => (addr, insns, runs, "0"),
            [addr, insns, runs, sig] => (addr, insns, runs, sig),
            _ => return Err(format!("bad plugin line `{line}`")),
        };
        let num = |s: &str, radix| u64::from_str_radix(s, radix).map_err(|_| format!("bad plugin line `{line}`"));
        let (addr, insns, runs, sig) = (num(addr, 16)?, num(insns, 10)?, num(runs, 10)?, num(sig, 16)?);
        let e = c.blocks.entry((addr, sig)).or_default();
        e.0 += insns * runs;
        e.1 += runs;
    }
    Ok(c)
}

/// Boots once, typing `input`; the plugin's counts.
fn boot(
    images: &crate::build::Images,
    plugin: &Path,
    stem: &Path,
    input: &str,
    opts: &Options,
) -> Result<Counts, String> {
    let counts = stem.with_extension("txt");
    let log = stem.with_extension("log");
    let pages = stem.with_extension("pages");
    let _ = std::fs::remove_file(&counts);
    let _ = std::fs::remove_file(&pages);
    let mut machine = Qemu::new(crate::qemu::Boot::Pvh {
        kernel: images.kernel.clone(),
        initrd: images.initrd.clone(),
        cmdline: "run=init".into(),
    });
    if opts.pages {
        machine.extra.extend(plugin_args_pages(plugin, &counts, &pages));
    } else {
        machine.extra.extend(plugin_args(plugin, &counts));
    }
    // The clock `bench --mode icount` runs on: a nanosecond per instruction,
    // so timer ticks (and the sleepers they wake) come as often per
    // instruction as in the benchmark, and two boots are deterministic.
    machine.extra.extend(["-icount".to_string(), "shift=0,sleep=off".to_string()]);
    if let Some(mib) = opts.disk {
        let image = stem.with_extension("img");
        crate::hostdisk::create(&image, mib)?;
        machine.extra.extend(crate::hostdisk::drive_args(&image));
    }
    let out = std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let mut child = machine
        .command()
        .stdin(Stdio::piped())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start QEMU: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // The serial port holds what is typed until the shell reads it.
        stdin.write_all(input.as_bytes()).map_err(|e| format!("cannot type at the shell: {e}"))?;
    }
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| format!("waiting for QEMU: {e}"))? {
            break s;
        }
        if start.elapsed() > opts.timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no halt within {} s (serial log: {})", opts.timeout.as_secs(), log.display()));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("icount: boot done ({}; serial log {})", crate::qemu::status_meaning(status.code()), log.display());
    parse(&std::fs::read_to_string(&counts).map_err(|e| format!("the plugin wrote no {}: {e}", counts.display()))?)
}

/// The symbol tables addresses are resolved with.
pub(crate) struct Symbols<'a> {
    pub kernel: &'a Table,
    pub personality: &'a Table,
    pub programs: &'a [Image],
}

impl Symbols<'_> {
    /// The function the block at `addr` (whose first bytes `sig` packs)
    /// lies in, its layer, and whether the block is the function's first.
    fn name(&self, addr: u64, sig: u64) -> (String, Layer, bool) {
        let first = |s: &crate::profile::symbols::Symbol| s.addr == addr;
        if addr >= crate::profile::table::KERNEL_BASE {
            return match self.kernel.lookup(addr) {
                Some(s) => (s.name.clone(), kernel_layer(&s.name), first(s)),
                None => ("[kernel, no symbol]".into(), Layer::Unknown, false),
            };
        }
        if let Some(s) = self.personality.lookup(addr).filter(|s| s.size > 0) {
            let layer = match user_layer(&s.name) {
                Layer::LibOs => Layer::LibOs,
                _ => Layer::Personality,
            };
            return (s.name.clone(), layer, first(s));
        }
        let found = self.programs.iter().find_map(|p| Some((p.symbol(addr, sig)?, p.linux)));
        match found {
            Some((s, true)) => (s.name.clone(), Layer::LinuxProgram, first(s)),
            Some((s, false)) => (s.name.clone(), user_layer(&s.name), first(s)),
            None => ("[user program]".into(), Layer::Program, false),
        }
    }
}

/// One function's share.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub name: String,
    pub layer: Layer,
    pub instructions: i64,
    /// Times the block at the function's first address ran (its entries).
    pub entries: i64,
}

/// Per function, `with` minus `without`, most instructions first.
pub(crate) fn attribute(with: &Counts, without: &Counts, syms: &Symbols<'_>) -> Vec<Row> {
    let mut by: HashMap<(String, Layer), (i64, i64)> = HashMap::new();
    let blocks: std::collections::HashSet<(u64, u64)> =
        with.blocks.keys().chain(without.blocks.keys()).copied().collect();
    let signed = |c: Option<&(u64, u64)>| c.map_or((0, 0), |&(i, n)| (i as i64, n as i64));
    for block in blocks {
        let (wi, wn) = signed(with.blocks.get(&block));
        let (oi, on) = signed(without.blocks.get(&block));
        let (name, layer, first) = syms.name(block.0, block.1);
        let e = by.entry((name, layer)).or_default();
        e.0 += wi - oi;
        if first {
            e.1 += wn - on;
        }
    }
    let mut rows: Vec<Row> =
        by.into_iter().map(|((name, layer), (i, n))| Row { name, layer, instructions: i, entries: n }).collect();
    sort(&mut rows);
    rows
}

/// Most instructions first, then by name.
fn sort(rows: &mut [Row]) {
    rows.sort_by(|a, b| b.instructions.cmp(&a.instructions).then_with(|| a.name.cmp(&b.name)));
}

/// The report: the `top` functions, then the layers and the total.
pub(crate) fn render(command: &str, rows: &[Row], top: usize) -> String {
    let total: i64 = rows.iter().map(|r| r.instructions).sum();
    let pct = |n: i64| if total == 0 { 0.0 } else { 100.0 * n as f64 / total as f64 };
    let mut s = format!("instructions `{command}` cost (with it minus without it): {total}\n\n");
    s.push_str(&format!("{:>12} {:>6} {:>9}  {:<20} function\n", "instructions", "%", "entries", "layer"));
    for r in rows.iter().take(top) {
        s.push_str(&format!(
            "{:>12} {:>5.1}% {:>9}  {:<20} {}\n",
            r.instructions,
            pct(r.instructions),
            r.entries,
            r.layer.name(),
            r.name
        ));
    }
    let mut layers: HashMap<Layer, i64> = HashMap::new();
    for r in rows {
        *layers.entry(r.layer).or_default() += r.instructions;
    }
    let mut layers: Vec<(Layer, i64)> = layers.into_iter().collect();
    layers.sort();
    s.push_str(&format!("\n{:>12} {:>6}  layer\n", "instructions", "%"));
    for (l, n) in layers {
        s.push_str(&format!("{n:>12} {:>5.1}%  {}\n", pct(n), l.name()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::table::KERNEL_BASE;

    fn t(syms: &[(u64, u64, &str)]) -> Table {
        Table::of(syms)
    }

    #[test]
    fn options() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let o = Options::parse(&s(&["--top", "5", "lx-bench-sh", "-x"])).unwrap();
        assert_eq!((o.command.as_str(), o.top, o.programs.len()), ("lx-bench-sh -x", 5, 0));
        let p = Options::parse(&s(&["--program", "dfsd,lx-bench-disk", "--program", "sh", "x"])).unwrap();
        assert_eq!(p.programs, ["dfsd", "lx-bench-disk", "sh"]);
        assert!(Options::parse(&s(&[])).is_err());
        assert!(Options::parse(&s(&["--bogus", "x"])).is_err());
        assert!(Options::parse(&s(&["--top"])).is_err());
        let d = Options::parse(&s(&["--diff", "a.txt", "b.txt", "--per", "800"])).unwrap();
        assert_eq!((d.diff, d.per), (Some(("a.txt".into(), "b.txt".into())), 800));
        assert!(Options::parse(&s(&["--diff", "a.txt"])).is_err());
        assert!(Options::parse(&s(&["--diff", "a.txt", "b.txt", "cmd"])).is_err());
    }

    #[test]
    fn parses_and_sums_retranslations() {
        let c = parse("400000 3 10\n400000 3 2\nffffffff80000000 5 1\n# dropped 0\n").unwrap();
        assert_eq!(c.blocks[&(0x40_0000, 0)], (36, 12));
        assert_eq!(c.blocks[&(0xffff_ffff_8000_0000, 0)], (5, 1));
        // Two programs' blocks at one address stay apart by their bytes.
        let (a, b) = (0x0100_0000_0000_0055, 0x0100_0000_0000_00f3);
        let s = parse(&format!("400000 3 10 {a:x}\n400000 3 2 {a:x}\n400000 1 1 {b:x}\n")).unwrap();
        assert_eq!((s.blocks[&(0x40_0000, a)], s.blocks[&(0x40_0000, b)]), ((36, 12), (1, 1)));
        assert!(parse("# dropped 7\n").is_err());
        assert!(parse("zz 1 1\n").is_err());
        assert!(parse("1 2\n").is_err());
    }

    #[test]
    fn attributes_the_difference_per_function() {
        let k = KERNEL_BASE + 0x1000;
        let kernel = t(&[(k, 0x100, "oxok_kernel::syscall::handle"), (k + 0x100, 0x10, "syscall_entry")]);
        let linux = t(&[(0x7000_0000, 0x100, "linux::on_foreign"), (0x7000_0100, 0x100, "oxok_rt::upcall::entry")]);
        let syms = Symbols { kernel: &kernel, personality: &linux, programs: &[] };
        let with =
            parse(&format!("{k:x} 10 100\n{:x} 4 50\n70000000 20 5\n70000100 2 5\n400000 7 3\n", k + 0x20)).unwrap();
        let without = parse(&format!("{k:x} 10 40\n")).unwrap();
        let rows = attribute(&with, &without, &syms);
        let get = |n: &str| rows.iter().find(|r| r.name == n).unwrap().clone();
        let handle = get("oxok_kernel::syscall::handle");
        assert_eq!((handle.instructions, handle.entries, handle.layer), (600 + 200, 60, Layer::KernelCalls));
        assert_eq!(get("linux::on_foreign").layer, Layer::Personality);
        assert_eq!(get("oxok_rt::upcall::entry").layer, Layer::LibOs);
        assert_eq!(get("[user program]").instructions, 21);
        assert_eq!(rows[0].name, "oxok_kernel::syscall::handle");
        let halves = per(rows.clone(), 2);
        assert_eq!((halves[0].instructions, halves[0].entries), (400, 30));
        let text = render("x", &rows, 10);
        assert!(text.contains("cost (with it minus without it): 931"), "{text}");
    }

    #[test]
    fn a_block_goes_to_the_program_whose_bytes_it_begins_with() {
        let (kernel, linux) = (t(&[]), t(&[(0x7000_0000, 0x100, "linux::on_foreign")]));
        let native = Image::of(&[(0x40_0000, 0x10, "dfsd::open")], 0x40_0000, &[0x55, 0x48], false);
        let lx = Image::of(&[(0x40_0000, 0x10, "snprintf")], 0x40_0000, &[0xf3, 0x0f], true);
        let programs = [native, lx];
        let syms = Symbols { kernel: &kernel, personality: &linux, programs: &programs };
        let (n, l) = (0x0200_0000_0000_4855u64, 0x0200_0000_0000_0ff3u64);
        let with = parse(&format!("400000 4 10 {n:x}\n400000 3 5 {l:x}\n")).unwrap();
        let rows = attribute(&with, &Counts::default(), &syms);
        let get = |n: &str| rows.iter().find(|r| r.name == n).unwrap().clone();
        assert_eq!((get("dfsd::open").instructions, get("dfsd::open").layer), (40, Layer::Program));
        assert_eq!((get("snprintf").instructions, get("snprintf").entries), (15, 5));
        assert_eq!(get("snprintf").layer, Layer::LinuxProgram);
    }
}
