//! Interoperability with GNU tar, skipped when `tar` is not installed.

use super::build;
use crate::{Archive, Entry};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::string::String;
use std::vec::Vec;
use std::{format, fs};

/// A fresh scratch directory unique to this process and test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxok-archive-{}-{test}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// A fresh scratch directory for `test` if GNU tar can be run (`None`:
/// the test is skipped).
fn tar_scratch(test: &str) -> Option<PathBuf> {
    let ok = Command::new("tar").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        std::eprintln!("skipping: `tar` is not available");
    }
    ok.then(|| scratch(test))
}

/// The archive GNU tar writes with `format` options of the files `names`
/// of `dir`, kept at `path`.
fn gnu_tar_create(format: &[&str], path: &Path, dir: &Path, names: &[&str]) -> Vec<u8> {
    let ok = Command::new("tar").args(format).arg("-cf").arg(path).arg("-C").arg(dir).args(names).status().unwrap();
    assert!(ok.success());
    fs::read(path).unwrap()
}

/// GNU tar extracts the archive at `path` into `into`.
fn gnu_tar_extract(path: &Path, into: &Path) {
    let status = Command::new("tar").arg("-xf").arg(path).arg("-C").arg(into).status().unwrap();
    assert!(status.success());
}

#[test]
fn gnu_tar_lists_our_archive() {
    let Some(dir) = tar_scratch("list") else { return };
    let path = dir.join("boot.tar");
    let big: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    fs::write(&path, build(&[("init", b"hello"), ("bin/big", &big)])).unwrap();
    let out = Command::new("tar").arg("-tvf").arg(&path).output().unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "tar failed: {}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 2, "{listing}");
    assert!(lines[0].starts_with("-rwxr-xr-x 0/0"), "{listing}");
    assert!(lines[0].contains(" 5 1970-01-01") && lines[0].ends_with(" init"), "{listing}");
    assert!(lines[1].contains(" 3000 ") && lines[1].ends_with(" bin/big"), "{listing}");
    // And GNU tar extracts the same bytes.
    gnu_tar_extract(&path, &dir);
    assert_eq!(fs::read(dir.join("bin/big")).unwrap(), big);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn we_read_gnu_tar_archives() {
    let Some(dir) = tar_scratch("read") else { return };
    let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    fs::write(dir.join("one"), b"first file\n").unwrap();
    fs::write(dir.join("two.bin"), &big).unwrap();
    fs::write(dir.join("empty"), b"").unwrap();
    let path = dir.join("gnu.tar");
    let data = gnu_tar_create(&["--format=ustar"], &path, &dir, &["one", "two.bin", "empty"]);
    let entries: Vec<_> = Archive::new(&data).entries().collect();
    assert_eq!(
        entries,
        [
            Ok(Entry { name: "one", data: b"first file\n" }),
            Ok(Entry { name: "two.bin", data: &big }),
            Ok(Entry { name: "empty", data: b"" }),
        ]
    );
    assert_eq!(Archive::new(&data).find("two.bin"), Some(&big[..]));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn gnu_tar_skips_our_pax_padding() {
    let Some(dir) = tar_scratch("aligned") else { return };
    let path = dir.join("boot.tar");
    let big: Vec<u8> = (0..9000u32).map(|i| (i % 253) as u8).collect();
    let files: [(&str, &[u8]); 5] =
        [("init", b"hello"), ("bin/big", &big), ("empty", b""), ("page", &[3u8; 4096]), ("block", &[4u8; 3584])];
    let mut tar = Vec::new();
    for (name, data) in files {
        crate::append_aligned(&mut tar, name, data, 4096).unwrap();
    }
    crate::finish(&mut tar);
    fs::write(&path, &tar).unwrap();
    let out = Command::new("tar").arg("-tf").arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "tar failed: {stderr}");
    let listing = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = listing.lines().collect();
    assert_eq!(names, files.map(|f| f.0), "{listing}");
    // GNU tar extracts the same bytes, and nothing else.
    let x = dir.join("x");
    fs::create_dir_all(&x).unwrap();
    gnu_tar_extract(&path, &x);
    for (name, data) in files {
        assert_eq!(fs::read(x.join(name)).unwrap(), data, "{name}");
    }
    let mut top: Vec<String> =
        fs::read_dir(&x).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    top.sort();
    assert_eq!(top, ["bin", "block", "empty", "init", "page"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn we_read_gnu_tar_pax_archives() {
    let Some(dir) = tar_scratch("pax") else { return };
    fs::write(dir.join("one"), b"first file\n").unwrap();
    fs::write(dir.join("two"), b"").unwrap();
    let path = dir.join("pax.tar");
    // A global header, then an extended header (times) before each file.
    let format = ["--format=pax", "--pax-option=globexthdr.name=global,comment=hello"];
    let data = gnu_tar_create(&format, &path, &dir, &["one", "two"]);
    assert_eq!((data[156], data[1024 + 156]), (b'g', b'x'), "GNU tar wrote pax headers");
    let entries: Vec<_> = Archive::new(&data).entries().collect();
    assert_eq!(entries, [Ok(Entry { name: "one", data: b"first file\n" }), Ok(Entry { name: "two", data: b"" })]);
    assert_eq!(Archive::new(&data).find("two"), Some(&b""[..]));
    let _ = fs::remove_dir_all(&dir);
}
