//! The personality is linked high in the user half (`linux.ld`), clear of
//! the Linux programs it loads at their own addresses (0x400000 and up).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-arg-bins=-T{dir}/linux.ld");
    println!("cargo:rustc-link-arg-bins=--no-pie");
    // No RELRO: `.data` and `.bss` must not share a page between two
    // writable segments (the loaders refuse that).
    println!("cargo:rustc-link-arg-bins=-znorelro");
    println!("cargo:rerun-if-changed={dir}/linux.ld");
}
