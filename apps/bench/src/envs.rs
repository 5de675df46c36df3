//! `kernel_mem_per_env`: what one more environment costs the kernel.
//!
//! Two parts, both read from the kernel's exposed information: frames
//! (`mem_info`'s free count falls by the page-table frames and the
//! application area of each new environment; reported alone as
//! `kernel_frames_per_env`) and kernel heap (`SysInfo::kernel_heap_used`
//! grows by the environment record, its capability list and the like).
//! `kernel_mem_per_env` is their sum, per empty environment.

use crate::{report, skip};
use oxok_libos::abi::CAP_SLOTS;
use oxok_libos::{Error, exposed, sys};

/// Environments created at once (each takes a capability slot).
const ROUND: u32 = 32;
const _: () = assert!((ROUND as usize) < CAP_SLOTS - 8);

/// Creates `envs` empty environments, in rounds of [`ROUND`], and reports
/// the frames they cost, per environment, in bytes.
pub fn kernel_mem_per_env(envs: u32) {
    match frames_per_env(envs.max(1)) {
        Ok((frames, heap)) => {
            report("kernel_frames_per_env", frames, "bytes");
            report("kernel_mem_per_env", frames + heap, "bytes");
        }
        Err(e) => {
            skip("kernel_frames_per_env", e);
            skip("kernel_mem_per_env", e);
        }
    }
}

fn heap_used() -> Result<u64, Error> {
    exposed::sysinfo().map(|i| i.kernel_heap_used).ok_or(Error::Invalid)
}

/// Bytes of frames and of kernel heap per environment.
fn frames_per_env(envs: u32) -> Result<(f64, f64), Error> {
    let frame_size = sys::mem_info()?[2];
    let mut consumed = 0u64;
    let mut heap = 0u64;
    let mut done = 0u32;
    while done < envs {
        let n = ROUND.min(envs - done);
        let before = settled_free()?;
        let heap_before = heap_used()?;
        let mut slots = [0u64; ROUND as usize];
        let mut made = 0;
        let mut failure = None;
        for s in slots.iter_mut().take(n as usize) {
            match sys::env_create() {
                Ok([slot, _]) => {
                    *s = slot;
                    made += 1;
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let after = exposed::free_frames().ok_or(Error::Invalid)?;
        heap += heap_used()?.saturating_sub(heap_before);
        for &s in &slots[..made] {
            let _ = sys::env_destroy(s);
        }
        if let Some(e) = failure {
            return Err(e);
        }
        consumed += before.saturating_sub(after);
        done += n;
    }
    settled_free()?;
    let per = |bytes: u64| bytes as f64 / f64::from(envs);
    Ok((per(consumed * frame_size), per(heap)))
}

/// The free-frame count once the kernel has finished releasing destroyed
/// environments (it does so a little at every kernel entry): unchanged over
/// 64 consecutive calls.
fn settled_free() -> Result<u64, Error> {
    let mut last = exposed::free_frames().ok_or(Error::Invalid)?;
    let mut same = 0;
    for _ in 0..100_000 {
        sys::null()?;
        let now = exposed::free_frames().ok_or(Error::Invalid)?;
        if now == last {
            same += 1;
            if same == 64 {
                return Ok(now);
            }
        } else {
            same = 0;
            last = now;
        }
    }
    Ok(last)
}
