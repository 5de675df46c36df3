//! `kernel_mem_per_env`: what one more environment costs the kernel.
//!
//! What user space can see is frames: `mem_info`'s free count falls by the
//! page-table frames and the application area of each new environment. The
//! kernel's heap objects (the environment record, its capability list) come
//! from a fixed heap whose use is not exposed, so the README's figure
//! ("the kernel's own accounting of memory per environment") cannot be
//! given honestly: the program reports the frame part as
//! `kernel_frames_per_env` and skips `kernel_mem_per_env`.

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
        Ok(bytes) => report("kernel_frames_per_env", bytes, "bytes"),
        Err(e) => skip("kernel_frames_per_env", e),
    }
    skip_heap();
}

fn skip_heap() {
    oxok_libos::println!("bench: skip kernel_mem_per_env kernel heap use is not exposed to user space");
}

fn frames_per_env(envs: u32) -> Result<f64, Error> {
    let frame_size = sys::mem_info()?[2];
    let mut consumed = 0u64;
    let mut done = 0u32;
    while done < envs {
        let n = ROUND.min(envs - done);
        let before = settled_free()?;
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
    Ok((consumed * frame_size) as f64 / f64::from(envs))
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
