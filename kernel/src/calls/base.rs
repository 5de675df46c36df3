//! FS and GS bases per environment: `env_set_base`, `env_get_base`.

use super::Cx;
use super::args::EnvCap;
use oxok_abi::{BASE_FS, BASE_GS, Error};
use oxok_cap::Rights;

/// Sets an environment's FS or GS base.
pub fn env_set_base(cx: &mut Cx<'_>, env_slot: EnvCap, which: u64, value: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    if !matches!(which, BASE_FS | BASE_GS) || !crate::fpu::base_ok(value) {
        return Err(Error::Invalid);
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    crate::fpu::sync(env);
    // The bases live in the image: one that has none gets it now (clean).
    let image = env.ext.make_image()?;
    if which == BASE_FS {
        image.fs_base = value;
    } else {
        image.gs_base = value;
    }
    crate::fpu::reload(env);
    Ok([])
}

/// Reads an environment's FS or GS base.
pub fn env_get_base(cx: &mut Cx<'_>, env_slot: EnvCap, which: u64) -> Result<[u64; 1], Error> {
    let target = env_slot.with(Rights::READ)?;
    if !matches!(which, BASE_FS | BASE_GS) {
        return Err(Error::Invalid);
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    crate::fpu::sync(env);
    let (fs, gs) = env.ext.bases();
    Ok([if which == BASE_FS { fs } else { gs }])
}
