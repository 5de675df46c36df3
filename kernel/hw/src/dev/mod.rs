//! Device drivers the kernel keeps for itself. Their `unsafe` is only the
//! few driver calls whose contract is "this buffer stays put until the
//! device gives it back".

pub mod flag_notify;
pub mod virtio_blk;
pub mod virtio_net;
