use crate::Status;
use crate::path::{normalise, with_index};

#[test]
fn plain_paths() {
    assert_eq!(normalise("/").as_deref(), Ok("/"));
    assert_eq!(normalise("/a/b.html").as_deref(), Ok("/a/b.html"));
    assert_eq!(normalise("//a///b/").as_deref(), Ok("/a/b/"));
    assert_eq!(normalise("/a/./b").as_deref(), Ok("/a/b"));
    assert_eq!(normalise("/a/b/..").as_deref(), Ok("/a/"));
    assert_eq!(normalise("/a/c/../b?x=/../..#f").as_deref(), Ok("/a/b"));
    assert_eq!(normalise("/hello%20world.txt").as_deref(), Ok("/hello world.txt"));
    assert_eq!(normalise("http://host:80/x/y").as_deref(), Ok("/x/y"));
    assert_eq!(normalise("HTTP://host").as_deref(), Ok("/"));
}

#[test]
fn traversal_is_refused() {
    for t in [
        "/..",
        "/../etc/passwd",
        "/a/../../b",
        "/%2e%2e/x",
        "/%2E%2e",
        "/a/./../..",
        "/.%2e/x",
        "http://h/../x",
        "/a%2f..%2f..%2fb",
        "/..\\x",
        "/a%5c..",
    ] {
        assert_eq!(normalise(t), Err(Status::BadRequest), "{t}");
    }
}

#[test]
fn malformed_targets_are_refused() {
    for t in ["*", "a/b", "", "/%", "/%4", "/%zz", "/a%00b", "/%0d%0a", "/%ff", "http:///x", "https://"] {
        assert_eq!(normalise(t), Err(Status::BadRequest), "{t}");
    }
}

#[test]
fn index_for_directories() {
    assert_eq!(with_index("/"), "/index.html");
    assert_eq!(with_index("/a/"), "/a/index.html");
    assert_eq!(with_index("/a"), "/a");
}
