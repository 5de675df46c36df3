//! hostile-exhaust: tries to exhaust the kernel's own memory — environments
//! until the table is full, each with every predicate index installed — and
//! checks that the kernel answers `NoMemory` instead of failing, that
//! everything can be destroyed again, and that another environment runs
//! afterwards (the scenario runs `hello` next).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::{Error, PREDICATES};
use oxok_libos::{Args, println, sys};
use oxok_pred::Builder;
use oxok_tests::Checks;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-exhaust");
    let mut b = Builder::new();
    for _ in 0..15 {
        b.load_u64(0x7f80_8000_0010).ge_imm(u64::MAX).or();
    }
    b.load_u64(0x7f80_8000_0010).ge_imm(u64::MAX);
    let Ok(code) = b.build() else {
        println!("hostile-exhaust: FAIL building the predicate");
        return 1;
    };
    let bytes = code.as_bytes();
    let mut children: Vec<u64> = Vec::new();
    let mut refused = None;
    // The capability list holds 64 slots: grant each child's capability
    // away is not possible, so create, fill, and destroy in waves of 60.
    let mut created = 0u32;
    for _wave in 0..40 {
        loop {
            if children.len() == 60 {
                break;
            }
            match sys::env_create() {
                Ok([slot, _]) => {
                    created += 1;
                    for i in 0..PREDICATES as u64 {
                        let _ = sys::pred_install(slot, i, bytes.as_ptr() as u64, bytes.len() as u64);
                    }
                    children.push(slot);
                }
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        if refused.is_some() {
            break;
        }
        // Keep most of them alive: leak half of each wave into the table
        // by dropping our capability (they stay until we exit).
        for slot in children.drain(..30) {
            let _ = sys::cap_drop(slot);
        }
        for slot in children.drain(..) {
            let _ = sys::env_destroy(slot);
        }
    }
    println!("hostile-exhaust: created {created} environments, then refused with {refused:?}");
    t.check(refused == Some(Error::NoMemory), "the kernel refuses with NoMemory once full");
    for slot in children.drain(..) {
        t.check(sys::env_destroy(slot).is_ok(), "destroy");
    }
    t.finish()
}
