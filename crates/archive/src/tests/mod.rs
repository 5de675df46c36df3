//! Host tests for the archive reader and writer.

mod aligned;
mod fuzz;
mod gnu_tar;
mod malformed;
mod octal;
mod roundtrip;

use crate::{ArchiveError, Entry, append, finish};
use alloc::vec::Vec;

/// An archive holding `files`, finished with the end marker.
fn build(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in files {
        append(&mut out, name, data).expect("append");
    }
    finish(&mut out);
    out
}

/// All entries of `data`, stopping at the first error (which is included).
fn read_all(data: &[u8]) -> Vec<Result<Entry<'_>, ArchiveError>> {
    crate::Archive::new(data).entries().collect()
}

/// Recomputes and stores a header's checksum after a test edited it.
fn fix_checksum(block: &mut [u8]) {
    let header: &mut [u8; 512] = block.try_into().expect("one block");
    let sum = crate::header::checksum(header);
    crate::octal::format(&mut header[148..155], sum).expect("fits");
    header[155] = b' ';
}

/// The offset `Entries::offset` gave before each entry of `archive`,
/// checking that `Archive::entry_at` finds that entry there again.
fn offsets_found_again(archive: &crate::Archive<'_>) -> Vec<usize> {
    let mut it = archive.entries();
    let mut offsets = Vec::new();
    loop {
        let at = it.offset();
        match it.next() {
            Some(Ok(e)) => {
                assert_eq!(archive.entry_at(at), Some(e));
                offsets.push(at);
            }
            Some(Err(e)) => panic!("{e}"),
            None => return offsets,
        }
    }
}
