//! The three XN templates of the file system, written in XN's UDF bytecode
//! (`oxok_abi::xn`). Template `n` is `templates()[n - 1]`, so the extent
//! types the records carry name them: [`T_SUPER`], [`T_ITAB`], [`T_DIR`].
//!
//! Every UDF reads only the one block it is given; registers start at 0, so
//! `r7` serves as a zero base in the loop-free programs.

use alloc::vec::Vec;

use oxok_abi::xn::{op, rights};
use oxok_xn::{Asm, template};

use crate::layout::{EXT_AT, EXTENTS, HEADER, ITABS, RECORD, RECORDS, T_ITAB};

/// `acl` of every type: the owner principal (u64 at byte 8) holds every
/// right.
fn acl() -> Asm {
    Asm::new().ld64(0, 7, 8).prin(0, rights::ALL)
}

/// Superblock `owns`: each non-zero table slot is one block of type
/// [`T_ITAB`].
fn super_owns() -> Asm {
    Asm::new()
        .li(6, 1)
        .li(7, T_ITAB)
        .repeat(0, ITABS as u32, 5)
        .shl(1, 0, 2)
        .ld32(2, 1, HEADER as u32)
        .eq(3, 2, 5) // r5 stays 0: r3 = (slot == 0)
        .raw(op::SUB, 4, 6, 3, 0) // length 1 - empty
        .ext(2, 4, 7)
}

/// Superblock `size`: the disk's bytes.
fn super_size() -> Asm {
    Asm::new().ld64(0, 7, 16).shl(0, 0, 12).size(0)
}

/// Table and directory `owns`: every extent of every record in use.
/// A free record (kind 0) owns nothing — C-FFS frees a record's extents
/// before the record, and fsck finds none on a free one — so its extents
/// are not even read. A record's extents are packed from slot 0 (C-FFS
/// grows a file into the slot after its last extent and frees from the
/// last one back; fsck refuses an extent after an unused one), so the
/// first unused extent (length 0) ends the record: a record with one
/// extent costs ten steps, not 22 as when all eight were looked at. The
/// extents of a record are written out, not looped over: each is read at
/// a constant offset from its record (two steps for the unused one that
/// ends it, five for one in use, against four and seven with a loop
/// computing its address).
fn records_owns() -> Asm {
    let first = (HEADER + EXT_AT) as u32;
    let mut a = Asm::new()
        .repeat(0, RECORDS as u32, (3 + EXTENTS * EXTENT_STEPS) as u8)
        .muli(1, 0, RECORD as u32)
        .ld8(2, 1, HEADER as u32)
        .jz(2, (EXTENTS * EXTENT_STEPS) as u32); // a free record: to the next
    for k in 0..EXTENTS as u32 {
        let at = first + k * 8;
        // After this extent's `jz`: its own three steps and every later
        // extent's.
        let rest = (EXTENT_STEPS as u32 - 2) + (EXTENTS as u32 - 1 - k) * EXTENT_STEPS as u32;
        a = a
            .ld16(5, 1, at + 4)
            .jz(5, rest) // an unused extent: the record's last, to the next record
            .ld32(4, 1, at)
            .ld16(6, 1, at + 6)
            .ext(4, 5, 6);
    }
    a
}

/// Instructions per extent in [`records_owns`].
const EXTENT_STEPS: usize = 5;

/// Table and directory `size`: the sum of the records' sizes.
fn records_size() -> Asm {
    Asm::new()
        .repeat(0, RECORDS as u32, 3)
        .muli(1, 0, RECORD as u32)
        .ld64(2, 1, (HEADER + 8) as u32)
        .add(3, 3, 2)
        .size(3)
}

/// The templates, in type order (superblock, inode table, directory).
pub fn templates() -> [Vec<u8>; 3] {
    [
        template(&super_owns(), &acl(), &super_size()),
        template(&records_owns(), &acl(), &records_size()),
        template(&records_owns(), &acl(), &records_size()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::*;
    use oxok_xn::{Extent, Template};

    #[test]
    fn templates_verify_and_describe_the_layout() {
        let t = templates();
        let sup = Template::parse(&t[0]).unwrap();
        let dir = Template::parse(&t[2]).unwrap();
        let mut sb = superblock(9, 1000);
        set_itab(&mut sb, 0, 5);
        set_itab(&mut sb, 3, 6);
        let owned = sup.owns(&sb, 1000, 3).unwrap();
        assert_eq!(owned.extents(), [Extent::new(5, 2, T_ITAB)]);
        assert_eq!(sup.acl(&sb).unwrap().grants(), [(9, rights::ALL)]);
        assert_eq!(sup.size(&sb).unwrap(), 1000 * 4096);

        let mut d = header(MAGIC_DIR, 9);
        let mut r = Record { kind: K_FILE, size: 5000, ..Record::default() };
        r.ext[0] = Ext { start: 10, len: 1, ty: 0 };
        r.ext[1] = Ext { start: 20, len: 3, ty: 0 };
        set_record(&mut d, 4, &r);
        let mut x = Record { kind: K_XDIR, size: 4096, ..Record::default() };
        for (k, e) in x.ext.iter_mut().enumerate() {
            *e = Ext { start: 30 + 2 * k as u32, len: 1, ty: T_DIR as u16 };
        }
        set_record(&mut d, RECORDS - 1, &x);
        let owned = dir.owns(&d, 1000, 3).unwrap();
        let mut want = vec![Extent::new(10, 1, 0), Extent::new(20, 3, 0)];
        want.extend((0..EXTENTS as u64).map(|k| Extent::new(30 + 2 * k, 1, T_DIR)));
        assert_eq!(owned.extents(), want);
        assert_eq!(dir.size(&d).unwrap(), 9096);
        // A free record owns nothing, whatever its extents say; nor does
        // an extent after an unused one (C-FFS never writes one).
        let mut f = Record { kind: K_FREE, ..Record::default() };
        f.ext[0] = Ext { start: 40, len: 2, ty: 0 };
        set_record(&mut d, 7, &f);
        let mut h = Record { kind: K_FILE, ..Record::default() };
        h.ext[2] = Ext { start: 50, len: 2, ty: 0 };
        set_record(&mut d, 8, &h);
        assert_eq!(dir.owns(&d, 1000, 3).unwrap(), owned);
    }

    /// `owns` as it was first written, with a loop over the extents (all
    /// eight looked at: the same result on packed records).
    fn records_owns_looped() -> Asm {
        let first = (HEADER + EXT_AT) as u32;
        Asm::new()
            .repeat(0, RECORDS as u32, 11)
            .muli(1, 0, RECORD as u32)
            .ld8(2, 1, HEADER as u32)
            .jz(2, 8)
            .repeat(2, EXTENTS as u32, 7)
            .shl(3, 2, 3)
            .add(3, 3, 1)
            .ld16(5, 3, first + 4)
            .jz(5, 3)
            .ld32(4, 3, first)
            .ld16(6, 3, first + 6)
            .ext(4, 5, 6)
    }

    /// `owns` says what the layout says — every record in use, its
    /// extents up to the first unused one (the same extents in the same
    /// order, so the same refusal when they overlap) — and, on packed
    /// records with noise, in fewer steps than the looped form.
    #[test]
    fn the_written_out_owns_says_what_the_looped_one_said_in_fewer_steps() {
        let fast = Template::parse(&templates()[2]).unwrap();
        let looped = Template::parse(&template(&records_owns_looped(), &acl(), &records_size())).unwrap();
        let mut rng = oxok_testrng::Rng::new(5);
        let (mut fewer, mut owning) = (0, 0);
        for _ in 0..3000 {
            let mut d = header(MAGIC_DIR, 9);
            for i in 0..RECORDS {
                if rng.below(3) == 0 {
                    continue;
                }
                let kind = [K_FREE, K_FILE, K_XDIR][rng.below(3) as usize];
                let mut r = Record { kind, size: rng.below(1 << 20), ..Record::default() };
                // Packed, as C-FFS writes them: used extents from slot 0.
                let used = if rng.below(8) == 0 { EXTENTS } else { rng.below(3) as usize };
                for e in r.ext.iter_mut().take(used) {
                    *e = Ext {
                        start: rng.below(60_000) as u32 + 50,
                        len: 1 + rng.below(4) as u16,
                        ty: rng.below(3) as u16,
                    };
                }
                set_record(&mut d, i, &r);
            }
            // Noise where owns reads nothing, and sometimes where it does.
            for _ in 0..rng.below(8) {
                let at = rng.below(4096) as usize;
                d[at] = rng.below(256) as u8;
            }
            let mut listed = Vec::new();
            for i in 0..RECORDS {
                let r = record(&d, i);
                if r.kind != K_FREE {
                    let used = r.ext.iter().take_while(|e| e.len > 0);
                    listed.extend(used.map(|e| Extent::new(u64::from(e.start), u64::from(e.len), u32::from(e.ty))));
                }
            }
            let a = fast.owns(&d, 65_536, 3);
            assert_eq!(a, oxok_xn::Owned::new(listed, 65_536, 3).map_err(oxok_xn::OwnsError::Set));
            owning += usize::from(a.is_ok_and(|o| !o.extents().is_empty()));
            let steps = |t: &Template| {
                let mut n = 0;
                let _ = t.owns.run(&d, &mut |_| Ok(())).map(|s| n = s);
                n
            };
            fewer += usize::from(steps(&fast) < steps(&looped));
        }
        assert!(owning > 500, "{owning} blocks owned something");
        assert_eq!(fewer, 3000, "fewer steps every time");
    }
}
