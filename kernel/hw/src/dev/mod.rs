//! Device drivers the kernel keeps for itself. `unsafe` is allowed here
//! (as in `arch`, `boot` and `mem`) only for the few driver calls whose
//! contract is "this buffer stays put until the device gives it back".

pub mod virtio_blk;
pub mod virtio_net;
