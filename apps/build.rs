//! Shared build script of every user program: link at the address `abi`
//! fixes, with the libOS's linker script.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-arg-bins=-T{dir}/../../libos/user.ld");
    println!("cargo:rustc-link-arg-bins=--no-pie");
    // No RELRO: it would give `.data` and `.bss` two writable segments that
    // share a page, which the kernel's loader (rightly) refuses.
    println!("cargo:rustc-link-arg-bins=-znorelro");
    println!("cargo:rerun-if-changed={dir}/../../libos/user.ld");
}
