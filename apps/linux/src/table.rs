//! The one table of Linux system calls: for each call its x86-64 number,
//! name, support level (full, partial with a note, or `-ENOSYS`) and
//! handler, one module per group (`calls/`). [`dispatch`] and the listing
//! `linux --calls` are generated from it. A number the table does not
//! know returns `-ENOSYS` and is logged once.

use crate::calls::{
    attr, epoll, exec, file, fork, fs, futex, info, itimer, links, memory, net, poll, process, select, signal, statfs,
    time, wait,
};
use crate::errno::{ENOSYS, Res};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::ExceptionFrame;

/// How completely a call is emulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// As Linux does it, for everything a single-threaded program can ask.
    Full,
    /// Works as the note says; the rest is refused or simplified.
    Partial,
    /// Known, returns `-ENOSYS` (programs fall back).
    Enosys,
}

/// A handler: the six argument registers, the upcall frame (for the calls
/// that change registers), the result or `-errno`.
pub type Handler = fn(&[u64; 6], &mut ExceptionFrame) -> Res;

/// One row of the table.
pub struct Entry {
    pub nr: u64,
    pub name: &'static str,
    pub level: Level,
    pub note: &'static str,
    pub handler: Handler,
}

/// Returns `-ENOSYS` for a call the table lists as unsupported.
fn enosys(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Err(ENOSYS)
}

macro_rules! linux_calls {
    ($($nr:literal $name:ident $level:ident $note:literal => $handler:path;)*) => {
        /// Every call the personality knows, by number.
        pub const TABLE: &[Entry] = &[
            $(Entry { nr: $nr, name: stringify!($name), level: Level::$level, note: $note, handler: $handler },)*
        ];

        /// Runs call `nr` with `args`; the value for `rax`.
        pub fn dispatch(nr: u64, args: &[u64; 6], frame: &mut ExceptionFrame) -> i64 {
            let handler = BY_NUMBER.get(nr as usize).copied().flatten();
            let result = match handler {
                Some(h) => h(args, frame),
                None => unknown(nr),
            };
            match result {
                Ok(v) => v,
                Err(e) => -e,
            }
        }
    };
}

linux_calls! {
    0 read Full "" => file::read;
    1 write Full "" => file::write;
    2 open Full "" => fs::open;
    3 close Full "" => file::close;
    4 stat Partial "owner root, modes kept by the RAM file system and the disk's C-FFS, the modification time for all three times" => fs::stat;
    5 fstat Partial "as stat" => fs::fstat;
    6 lstat Partial "as stat, of a symbolic link itself" => fs::lstat;
    7 poll Full "" => poll::poll;
    8 lseek Full "" => file::lseek;
    9 mmap Partial "anonymous (MAP_SHARED ones shared with fork relatives, frames given at map time, at most half the free ones), and file mappings read at map time (private)" => memory::mmap;
    10 mprotect Partial "PROT_NONE pages already touched stay readable" => memory::mprotect;
    11 munmap Full "" => memory::munmap;
    12 brk Full "" => memory::brk;
    13 rt_sigaction Partial "handlers get Linux frames (siginfo, ucontext, FXSAVE) at call returns, faults and slot ends; stop signals act as ignored" => signal::rt_sigaction;
    14 rt_sigprocmask Full "" => signal::rt_sigprocmask;
    16 ioctl Partial "TCGETS/TCSETS*/TIOCGWINSZ/TIOCGPGRP/TIOCSPGRP on the console; ENOTTY elsewhere" => file::ioctl;
    17 pread64 Full "" => file::pread64;
    18 pwrite64 Full "" => file::pwrite64;
    19 readv Full "" => file::readv;
    20 writev Full "" => file::writev;
    21 access Partial "existence only: every mode is granted to the one user" => fs::access;
    22 pipe Full "" => file::pipe;
    24 sched_yield Full "" => process::sched_yield;
    25 mremap Partial "private mappings grow in place or move (contents copied); MAP_SHARED ones only shrink; no MREMAP_DONTUNMAP" => memory::mremap;
    28 madvise Partial "MADV_DONTNEED frees the pages (zero at next touch); other advice ignored" => memory::madvise;
    32 dup Full "" => file::dup;
    33 dup2 Full "" => file::dup2;
    35 nanosleep Partial "sleeps in whole timer ticks, never less than asked; a signal ends it (EINTR, time left)" => time::nanosleep;
    36 getitimer Partial "ITIMER_REAL only" => itimer::getitimer;
    37 alarm Partial "SIGALRM on time in a wait, else as the next call returns" => itimer::alarm;
    38 setitimer Partial "ITIMER_REAL only; SIGALRM as alarm" => itimer::setitimer;
    39 getpid Full "" => process::getpid;
    40 sendfile Full "" => file::sendfile;
    41 socket Partial "AF_INET stream (TCP) and datagram (UDP); SOCK_NONBLOCK, SOCK_CLOEXEC" => net::socket;
    42 connect Partial "IPv4; EINPROGRESS when non-blocking" => net::connect;
    43 accept Full "" => net::accept;
    44 sendto Partial "MSG_DONTWAIT, MSG_NOSIGNAL, MSG_MORE (TCP); datagrams up to 1472 bytes" => net::sendto;
    45 recvfrom Partial "MSG_DONTWAIT, MSG_WAITALL; MSG_PEEK is EOPNOTSUPP" => net::recvfrom;
    46 sendmsg Partial "as sendto, gathered; no control messages" => net::sendmsg;
    47 recvmsg Partial "as recvfrom, scattered; no control messages" => net::recvmsg;
    48 shutdown Full "" => net::shutdown;
    49 bind Partial "IPv4, this machine's address or any" => net::bind;
    50 listen Partial "backlog clamped to 1..=64" => net::listen;
    51 getsockname Full "" => net::getsockname;
    52 getpeername Full "" => net::getpeername;
    54 setsockopt Partial "SO_REUSEADDR/REUSEPORT/KEEPALIVE accepted; SO_SNDBUF, SO_RCVBUF, SO_RCVTIMEO, TCP_NODELAY, TCP_CORK" => net::setsockopt;
    55 getsockopt Partial "SO_TYPE, SO_ERROR, SO_SNDBUF, SO_RCVBUF, SO_REUSEADDR, SO_KEEPALIVE, TCP_NODELAY, TCP_CORK" => net::getsockopt;
    60 exit Full "" => process::exit_thread;
    62 kill Partial "to itself, or via libOS signals to descendants (signals 1-31); groups: the caller, its children in them and their descendants; pid -1 ESRCH" => signal::kill;
    63 uname Full "" => info::uname;
    72 fcntl Partial "F_DUPFD(_CLOEXEC), F_GETFD/F_SETFD, F_GETFL; F_SETFL: O_NONBLOCK on sockets, accepted elsewhere" => file::fcntl;
    74 fsync Full "" => file::fsync;
    75 fdatasync Full "" => file::fsync;
    162 sync Full "" => file::sync;
    306 syncfs Full "" => file::syncfs;
    77 ftruncate Full "" => fs::ftruncate;
    79 getcwd Full "" => fs::getcwd;
    80 chdir Full "" => fs::chdir;
    82 rename Full "" => fs::rename;
    264 renameat Full "" => fs::renameat;
    316 renameat2 Partial "RENAME_NOREPLACE (checked, then renamed: not atomic against another process); RENAME_EXCHANGE, RENAME_WHITEOUT EINVAL" => fs::renameat2;
    83 mkdir Partial "mode (less the umask) kept by the RAM file system, ignored elsewhere" => fs::mkdir;
    84 rmdir Full "" => fs::rmdir;
    87 unlink Full "" => fs::unlink;
    89 readlink Full "symbolic links of the file servers, /proc/self/exe" => links::readlink;
    86 link Partial "in one file server, not across /tmp and the disk" => links::link;
    88 symlink Partial "in the file servers, resolved inside the server the link is on" => links::symlink;
    265 linkat Partial "as link; AT_SYMLINK_FOLLOW" => links::linkat;
    266 symlinkat Partial "as symlink" => links::symlinkat;
    267 readlinkat Full "as readlink" => links::readlinkat;
    90 chmod Partial "modes kept by the RAM file system and the disk's C-FFS (never checked: one user, root), accepted elsewhere" => attr::chmod;
    91 fchmod Partial "as chmod" => attr::fchmod;
    92 chown Partial "one user: root (0 or -1) accepted, others EPERM" => attr::chown;
    93 fchown Partial "one user: root (0 or -1) accepted, others EPERM" => attr::fchown;
    94 lchown Partial "one user: root (0 or -1) accepted, others EPERM" => attr::chown;
    95 umask Full "" => fs::umask;
    137 statfs Partial "sizes from the file server's INFO (the disk's: XN's count of its blocks); no inode limit on the disk (f_files 0); the personality's own files (devices, /proc, /boot) hold no blocks" => statfs::statfs;
    138 fstatfs Partial "as statfs; a pipe's is pipefs with no blocks" => statfs::fstatfs;
    96 gettimeofday Full "the RTC read at boot plus the TSC; time zone UTC" => time::gettimeofday;
    97 getrlimit Partial "fixed limits; see prlimit64" => info::getrlimit;
    102 getuid Full "" => info::zero;
    104 getgid Full "" => info::zero;
    107 geteuid Full "" => info::zero;
    108 getegid Full "" => info::zero;
    109 setpgid Partial "the caller and its children; a group of the caller's session" => process::setpgid;
    110 getppid Full "" => process::getppid;
    111 getpgrp Full "" => process::getpgrp;
    112 setsid Full "" => process::setsid;
    121 getpgid Partial "the caller and its children; ESRCH for others" => process::getpgid;
    124 getsid Partial "the caller and its children (the caller's session); ESRCH for others" => process::getsid;
    131 sigaltstack Full "" => signal::sigaltstack;
    157 prctl Partial "PR_SET_NAME/PR_GET_NAME" => process::prctl;
    158 arch_prctl Partial "ARCH_SET_FS/ARCH_GET_FS" => process::arch_prctl;
    186 gettid Full "" => process::gettid;
    200 tkill Partial "to its own threads: a process signal; others as kill" => signal::tkill;
    201 time Full "the RTC read at boot plus the TSC" => time::time;
    217 getdents64 Full "" => fs::getdents64;
    218 set_tid_address Full "" => process::set_tid_address;
    228 clock_gettime Partial "REALTIME: the RTC read at boot plus the TSC; the CPU-time clocks count from boot" => time::clock_gettime;
    229 clock_getres Full "" => time::clock_getres;
    230 clock_nanosleep Partial "as nanosleep; TIMER_ABSTIME on REALTIME converted at the call (a clock change meanwhile is not seen)" => time::clock_nanosleep;
    231 exit_group Full "" => process::exit;
    234 tgkill Partial "as tkill" => signal::tgkill;
    257 openat Full "" => fs::openat;
    258 mkdirat Partial "as mkdir" => fs::mkdirat;
    260 fchownat Partial "one user: root (0 or -1) accepted, others EPERM" => attr::fchownat;
    262 newfstatat Partial "as stat; AT_EMPTY_PATH" => fs::newfstatat;
    263 unlinkat Full "" => fs::unlinkat;
    268 fchmodat Partial "as chmod" => attr::fchmodat;
    269 faccessat Partial "as access" => fs::faccessat;
    271 ppoll Full "" => poll::ppoll;
    273 set_robust_list Partial "recorded (one thread: nothing to clean up)" => process::set_robust_list;
    280 utimensat Partial "whole seconds; the RAM file system keeps both times, the disk's C-FFS the modification time" => attr::utimensat;
    288 accept4 Partial "SOCK_NONBLOCK, SOCK_CLOEXEC" => net::accept4;
    292 dup3 Full "" => file::dup3;
    293 pipe2 Partial "O_NONBLOCK is ignored (ends block)" => file::pipe2;
    302 prlimit64 Partial "own process; RLIMIT_NPROC narrows the account's environment limit; others fixed (setting EPERM)" => info::prlimit64;
    318 getrandom Full "" => info::getrandom;
    332 statx Enosys "" => enosys;
    334 rseq Enosys "" => enosys;
    435 clone3 Enosys "glibc's posix_spawn and pthread_create fall back to clone" => enosys;
    439 faccessat2 Partial "as access" => fs::faccessat2;
    // Processes and signals (issue 12, process model).
    15 rt_sigreturn Full "" => signal::rt_sigreturn;
    34 pause Full "" => signal::pause;
    56 clone Partial "processes (CLONE_VM|CLONE_VFORK copies); threads are cooperative (switch at futex wait, yield, exit); CLONE_FILES/FS without THREAD EINVAL" => fork::clone;
    57 fork Full "" => fork::fork;
    58 vfork Partial "as fork (the child gets a copy, not the parent's memory)" => fork::vfork;
    59 execve Partial "Linux programs in place; #! scripts through their interpreter; native Oxok programs run in a child the process waits for; a file without an execute bit EACCES" => exec::execve;
    61 wait4 Partial "groups as the caller knows its children's; rusage zero" => wait::wait4;
    127 rt_sigpending Full "" => signal::rt_sigpending;
    130 rt_sigsuspend Full "" => signal::rt_sigsuspend;
    247 waitid Partial "WEXITED only; rusage zero" => wait::waitid;
    160 setrlimit Partial "as prlimit64" => info::setrlimit;
    23 select Partial "the timeout is not updated with the time left" => select::select;
    270 pselect6 Full "" => select::pselect6;
    213 epoll_create Full "" => epoll::epoll_create;
    291 epoll_create1 Full "" => epoll::epoll_create1;
    233 epoll_ctl Partial "an epoll descriptor cannot itself be watched (EPERM); at most 128 watches an instance (ENOSPC); EPOLLRDHUP and EPOLLPRI are accepted, never reported" => epoll::epoll_ctl;
    232 epoll_wait Partial "level-triggered; EPOLLET acts as level-triggered (may report more often); a fork child gets a copy of the instance, not the same one" => epoll::epoll_wait;
    281 epoll_pwait Partial "as epoll_wait, with the signal mask as ppoll" => epoll::epoll_pwait;
    441 epoll_pwait2 Partial "as epoll_pwait, with a timespec timeout" => epoll::epoll_pwait2;
    202 futex Partial "WAIT/WAKE (BITSET), REQUEUE, CMP_REQUEUE between the process's threads; timeouts; WAKE_OP, PI ENOSYS" => futex::futex;
}

/// Numbers past the last Linux call the table could name.
const NUMBERS: usize = 512;

/// The handlers indexed by number, built from [`TABLE`] at compile time.
static BY_NUMBER: [Option<Handler>; NUMBERS] = {
    let mut by = [None; NUMBERS];
    let mut i = 0;
    while i < TABLE.len() {
        assert!((TABLE[i].nr as usize) < NUMBERS && by[TABLE[i].nr as usize].is_none(), "call numbers are unique");
        by[TABLE[i].nr as usize] = Some(TABLE[i].handler);
        i += 1;
    }
    by
};

/// Numbers already logged as unknown (one bit each, up to 1024).
static LOGGED: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];

fn unknown(nr: u64) -> Res {
    let first = match LOGGED.get((nr / 64) as usize) {
        Some(w) => w.fetch_or(1 << (nr % 64), Ordering::Relaxed) & (1 << (nr % 64)) == 0,
        None => true,
    };
    if first {
        oxok_libos::eprintln!("linux: unknown system call {nr}: ENOSYS");
    }
    Err(ENOSYS)
}
