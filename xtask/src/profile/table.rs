//! Turning sampled `rip` values into the hottest functions and layers.

use super::symbols::Table;
use std::collections::HashMap;

/// Where an instruction belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Layer {
    /// The kernel's entry and exit stubs (assembly labels, `arch::syscall`, `arch::idt`).
    KernelEntry,
    /// The rest of the kernel: call handlers and what they call.
    KernelCalls,
    /// The libOS linked into the program (`oxok_libos::…`).
    LibOs,
    /// The program itself (and the Rust library code linked into it).
    Program,
    /// The Linux personality (`apps/linux`) apart from the libOS in it.
    Personality,
    /// A Linux program the personality runs (no symbols: Debian's busybox
    /// is stripped).
    LinuxProgram,
    /// An address no symbol covers.
    Unknown,
}

impl Layer {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Layer::KernelEntry => "kernel entry/exit",
            Layer::KernelCalls => "kernel call handlers",
            Layer::LibOs => "libOS",
            Layer::Program => "program",
            Layer::Personality => "Linux personality",
            Layer::LinuxProgram => "Linux program",
            Layer::Unknown => "unknown",
        }
    }
}

/// Kernel addresses start here (the upper half).
pub(crate) const KERNEL_BASE: u64 = 0xffff_8000_0000_0000;

/// The kernel's assembly labels on the way in and out.
const ENTRY_LABELS: &[&str] = &["syscall_entry", "exit_to_user", "trap_common", "trap_stubs"];

/// The layer of a kernel symbol.
pub(crate) fn kernel_layer(name: &str) -> Layer {
    let entry = ENTRY_LABELS.contains(&name)
        || name.starts_with("oxok_kernel::arch::syscall")
        || name.starts_with("oxok_kernel::arch::idt");
    if entry { Layer::KernelEntry } else { Layer::KernelCalls }
}

/// The layer of a user program's symbol.
pub(crate) fn user_layer(name: &str) -> Layer {
    let libos = ["oxok_libos::", "<oxok_libos::", "oxok_rt::", "<oxok_rt::"].iter().any(|p| name.starts_with(p));
    if libos { Layer::LibOs } else { Layer::Program }
}

/// Sample counts per function and per layer.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Profile {
    pub total: usize,
    /// `(function, layer, samples)`, most samples first.
    pub functions: Vec<(String, Layer, usize)>,
    /// `(layer, samples)`, in layer order.
    pub layers: Vec<(Layer, usize)>,
}

/// The user half's symbols: the bench program's, and for a workload that
/// runs a Linux program the personality's, whose code lies in its own
/// range; every other user address is then the Linux program's (the bench
/// program only waits for it meanwhile).
pub(crate) struct User<'a> {
    pub program: &'a Table,
    pub personality: Option<&'a Table>,
}

impl User<'_> {
    fn key(&self, rip: u64) -> (String, Layer) {
        let Some(personality) = self.personality else {
            return match self.program.lookup(rip) {
                Some(s) => (s.name.clone(), user_layer(&s.name)),
                None => (format!("[user {rip:#x}, no symbol]"), Layer::Unknown),
            };
        };
        match personality.lookup(rip) {
            Some(s) if user_layer(&s.name) == Layer::LibOs => (s.name.clone(), Layer::LibOs),
            Some(s) => (s.name.clone(), Layer::Personality),
            None => ("[Linux program]".to_string(), Layer::LinuxProgram),
        }
    }
}

/// Attributes every sample to its function: kernel addresses through
/// `kernel`, the others through `user`.
pub(crate) fn aggregate(samples: &[u64], kernel: &Table, user: &User<'_>) -> Profile {
    let mut by_fn: HashMap<(String, Layer), usize> = HashMap::new();
    for &rip in samples {
        let key = if rip >= KERNEL_BASE {
            match kernel.lookup(rip) {
                Some(s) => (s.name.clone(), kernel_layer(&s.name)),
                None => ("[kernel, no symbol]".to_string(), Layer::Unknown),
            }
        } else {
            user.key(rip)
        };
        *by_fn.entry(key).or_default() += 1;
    }
    let mut functions: Vec<(String, Layer, usize)> = by_fn.into_iter().map(|((n, l), c)| (n, l, c)).collect();
    functions.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let mut layers: HashMap<Layer, usize> = HashMap::new();
    for (_, l, c) in &functions {
        *layers.entry(*l).or_default() += c;
    }
    let mut layers: Vec<(Layer, usize)> = layers.into_iter().collect();
    layers.sort();
    Profile { total: samples.len(), functions, layers }
}

fn pct(n: usize, total: usize) -> f64 {
    if total == 0 { 0.0 } else { 100.0 * n as f64 / total as f64 }
}

/// The report: the `top` hottest functions, then the layers.
pub(crate) fn render(p: &Profile, top: usize) -> String {
    let mut s = format!("{:>8} {:>6}  {:<20} function\n", "samples", "%", "layer");
    for (name, layer, n) in p.functions.iter().take(top) {
        s.push_str(&format!("{n:>8} {:>5.1}%  {:<20} {name}\n", pct(*n, p.total), layer.name()));
    }
    let rest: usize = p.functions.iter().skip(top).map(|f| f.2).sum();
    if rest > 0 {
        let others = p.functions.len() - top;
        s.push_str(&format!("{rest:>8} {:>5.1}%  {:<20} ({others} other functions)\n", pct(rest, p.total), ""));
    }
    s.push_str(&format!("\n{:>8} {:>6}  layer\n", "samples", "%"));
    for (layer, n) in &p.layers {
        s.push_str(&format!("{n:>8} {:>5.1}%  {}\n", pct(*n, p.total), layer.name()));
    }
    s.push_str(&format!("{:>8} {:>5.1}%  total\n", p.total, 100.0));
    s
}

#[cfg(test)]
mod tests {
    use super::super::symbols::Table;
    use super::*;

    fn t(syms: &[(u64, u64, &str)]) -> Table {
        Table::of(syms)
    }

    #[test]
    fn layers_of_names() {
        assert_eq!(kernel_layer("syscall_entry"), Layer::KernelEntry);
        assert_eq!(kernel_layer("oxok_kernel::arch::idt::trap_entry"), Layer::KernelEntry);
        assert_eq!(kernel_layer("oxok_kernel::syscall::handle"), Layer::KernelCalls);
        assert_eq!(kernel_layer("memcpy"), Layer::KernelCalls);
        assert_eq!(user_layer("oxok_libos::sys::null"), Layer::LibOs);
        assert_eq!(user_layer("<oxok_libos::x::Y as core::fmt::Write>::write_str"), Layer::LibOs);
        assert_eq!(user_layer("bench::null_call"), Layer::Program);
        assert_eq!(user_layer("oxok_rt::upcall::foreign_entry"), Layer::LibOs);
    }

    #[test]
    fn aggregation_and_table() {
        let k = KERNEL_BASE + 0x1000;
        let kernel = t(&[(k, 0x10, "syscall_entry"), (k + 0x100, 0x100, "oxok_kernel::syscall::handle")]);
        let prog = t(&[(0x40_0000, 0x40, "bench::null_call"), (0x40_0100, 0x20, "oxok_libos::sys::null")]);
        let samples = [k + 1, k + 0x180, k + 0x181, 0x40_0010, 0x40_0101, 0x40_0102, 0x40_0103, 0x9000, k + 0x50];
        let p = aggregate(&samples, &kernel, &User { program: &prog, personality: None });
        assert_eq!(p.total, 9);
        assert_eq!(p.functions[0], ("oxok_libos::sys::null".to_string(), Layer::LibOs, 3));
        assert_eq!(p.functions[1], ("oxok_kernel::syscall::handle".to_string(), Layer::KernelCalls, 2));
        assert_eq!(
            p.layers,
            vec![
                (Layer::KernelEntry, 1),
                (Layer::KernelCalls, 2),
                (Layer::LibOs, 3),
                (Layer::Program, 1),
                (Layer::Unknown, 2)
            ]
        );
        let text = render(&p, 2);
        assert!(text.contains("       3  33.3%  libOS                oxok_libos::sys::null\n"), "{text}");
        assert!(text.contains("(4 other functions)"), "{text}");
        assert!(text.contains("       9 100.0%  total"), "{text}");
    }

    #[test]
    fn a_linux_workload_splits_personality_libos_and_program() {
        let kernel = t(&[]);
        let prog = t(&[(0x40_0000, 0x40, "bench::null_call")]);
        let linux =
            t(&[(0x7000_0000, 0x40, "linux::on_foreign"), (0x7000_0100, 0x40, "oxok_rt::upcall::foreign_entry")]);
        let samples = [0x40_0010, 0x7000_0010, 0x7000_0011, 0x7000_0110];
        let p = aggregate(&samples, &kernel, &User { program: &prog, personality: Some(&linux) });
        assert_eq!(p.functions[0], ("linux::on_foreign".to_string(), Layer::Personality, 2));
        assert_eq!(p.layers, vec![(Layer::LibOs, 1), (Layer::Personality, 2), (Layer::LinuxProgram, 1)]);
    }
}
