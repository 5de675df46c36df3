use alloc::vec::Vec;

use crate::checksum::{add, finish, fold, shift_odd};
use crate::group::{is_html, references};
use crate::sums::SegmentSums;

#[test]
fn sums_combine() {
    let mut rng = oxok_testrng::Rng::new(7);
    for _ in 0..200 {
        let len = rng.index(3000);
        let data = rng.bytes(len);
        let cut = rng.index(len + 1);
        let whole = fold(add(0, &data));
        let (a, b) = data.split_at(cut);
        let b_sum = if cut.is_multiple_of(2) { add(0, b) } else { shift_odd(add(0, b)) };
        assert_eq!(fold(add(0, a) + b_sum), whole);
    }
}

#[test]
fn rfc1071_example() {
    let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
    assert_eq!(fold(add(0, &data)), 0xddf2);
    assert_eq!(finish(add(0, &data)), !0xddf2);
}

#[test]
fn segment_sums_match_direct_sums() {
    let mut rng = oxok_testrng::Rng::new(9);
    for head_len in [0usize, 1, 97, 200, 1460, 1461] {
        let head = rng.bytes(head_len);
        let body = rng.bytes(5000);
        let all: Vec<u8> = head.iter().chain(body.iter()).copied().collect();
        let s = SegmentSums::new(&[&head, &body], 1460);
        assert_eq!(s.len() as usize, all.len());
        let mut off = 0;
        while off < all.len() {
            let len = 1460.min(all.len() - off);
            let got = s.get(off as u32, len as u32).map(fold);
            assert_eq!(got, Some(fold(add(0, &all[off..off + len]))), "head {head_len} off {off}");
            off += len;
        }
        assert_eq!(s.get(1, 10), None);
        assert_eq!(s.get(0, 10), None);
        assert_eq!(s.get(all.len() as u32, 0), None);
    }
}

#[test]
fn html_references() {
    let page = br##"<html><head><link rel="stylesheet" href="style.css"><script src='/js/app.js'></script></head>
<body><img src=img/logo.png alt=x><a href="http://elsewhere/x">x</a><a href="#top">t</a>
<a HREF = "../up.html">u</a><a href="sub/">s</a><img src="img/logo.png"><a href="mailto:a@b">m</a>
<img src="a.png?v=2"><a href="//cdn/x.js">c</a></body></html>"##;
    let refs = references(page, "/docs/index.html");
    assert_eq!(
        refs,
        ["/docs/style.css", "/js/app.js", "/docs/img/logo.png", "/up.html", "/docs/sub/index.html", "/docs/a.png"]
    );
    assert_eq!(references(br#"<a href="../../../etc/passwd">"#, "/index.html"), Vec::<alloc::string::String>::new());
    assert!(is_html("/a/index.HTML") && is_html("/x.htm") && !is_html("/x.css"));
}
