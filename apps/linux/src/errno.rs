//! Linux error numbers (returned negated) and the libOS errors they map to.

use oxok_libos::abi::Error;
use oxok_libos::fd::IoError;

pub const EPERM: i64 = 1;
pub const ENOENT: i64 = 2;
pub const ESRCH: i64 = 3;
pub const EINTR: i64 = 4;
pub const EIO: i64 = 5;
pub const E2BIG: i64 = 7;
pub const ENOEXEC: i64 = 8;
pub const EBADF: i64 = 9;
pub const ECHILD: i64 = 10;
pub const EAGAIN: i64 = 11;
pub const ENOMEM: i64 = 12;
pub const EACCES: i64 = 13;
pub const EFAULT: i64 = 14;
pub const EEXIST: i64 = 17;
pub const ENOTDIR: i64 = 20;
pub const EISDIR: i64 = 21;
pub const EINVAL: i64 = 22;
pub const EMFILE: i64 = 24;
pub const ENOTTY: i64 = 25;
pub const ENOSPC: i64 = 28;
pub const ESPIPE: i64 = 29;
pub const EPIPE: i64 = 32;
pub const ERANGE: i64 = 34;
pub const ENAMETOOLONG: i64 = 36;
pub const ENODEV: i64 = 19;
pub const ENOSYS: i64 = 38;
pub const ENOTEMPTY: i64 = 39;
pub const ELOOP: i64 = 40;
pub const ENOTSOCK: i64 = 88;
pub const EDESTADDRREQ: i64 = 89;
pub const ENOPROTOOPT: i64 = 92;
pub const EPROTONOSUPPORT: i64 = 93;
pub const EOPNOTSUPP: i64 = 95;
pub const EAFNOSUPPORT: i64 = 97;
pub const EADDRINUSE: i64 = 98;
pub const ENETDOWN: i64 = 100;
pub const ECONNRESET: i64 = 104;
pub const ENOTCONN: i64 = 107;
pub const ETIMEDOUT: i64 = 110;
pub const ECONNREFUSED: i64 = 111;
pub const EINPROGRESS: i64 = 115;

/// A failed call's result: `-errno`.
pub type Res = Result<i64, i64>;

/// The Linux error for a libOS I/O error.
pub fn from_io(e: IoError) -> i64 {
    match e {
        IoError::Kernel(k) => from_kernel(k),
        IoError::BadFd => EBADF,
        IoError::NotFound => ENOENT,
        IoError::Exists => EEXIST,
        IoError::NotDir => ENOTDIR,
        IoError::IsDir => EISDIR,
        IoError::NotEmpty => ENOTEMPTY,
        IoError::BrokenPipe => EPIPE,
        IoError::Unsupported => ESPIPE,
        IoError::Invalid => EINVAL,
        IoError::NoSpace => ENOSPC,
        IoError::NoServer => EIO,
        IoError::WouldBlock => EAGAIN,
        IoError::AddrInUse => EADDRINUSE,
        IoError::NotConnected => ENOTCONN,
        IoError::ConnRefused => ECONNREFUSED,
        IoError::ConnReset => ECONNRESET,
        IoError::TimedOut => ETIMEDOUT,
        IoError::Loop => ELOOP,
        IoError::TooLong => ENAMETOOLONG,
        IoError::NotPermitted => EPERM,
    }
}

/// The Linux error for a kernel refusal.
pub fn from_kernel(e: Error) -> i64 {
    match e {
        Error::BadAddress => EFAULT,
        Error::NoMemory => ENOMEM,
        _ => EINVAL,
    }
}
