//! Scenarios of issue 11 (one vocabulary; file data by the page) and of
//! the file protocol's batching since.
//! `scenarios.rs` lists them with the others.

use crate::scenario::Scenario;

/// Every scenario of this file, in the order `scenarios.rs` lists them.
pub(crate) const VOCAB_SCENARIOS: [Scenario; 5] = [FS_BUFFER, FS_CLOSES, FS_PREFETCH, FS_AHEAD, FS_BEHIND];

const FS_BUFFER: Scenario = Scenario {
    name: "fs-buffer",
    about: "file data by the page: fsd grants each client a shared buffer of up to 16 pages, as many as its transfers \
            need and at most 8 a call (pct_grant); 300 KiB written and read back in mixed sizes, a forked child gets its \
            own buffer; pct_grant outside a served call, READ_BUF/WRITE_BUF without a buffer, more than the pages granted \
            or on a foreign handle, pages not where the buffer ends, more than 8 or none at once, past the buffer, and \
            asking afresh while holding the pages are refused; no frame leaked",
    cmdline: "run=fs-buffer",
    expect: &["fsd: serving files", "fs-buffer grants: ok (", "fsd: stopped after", "fs-buffer: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const FS_CLOSES: Scenario = Scenario {
    name: "fs-closes",
    about: "files' closes wait and go up to eight in one CLOSE (fs::closes): counted by raw INFO, they wait, \
            the client's INFO and UNLINK send them first, a writer's close waits too, a forked child never sends its \
            parent's; a batched CLOSE closes every good handle and reports a bad one; another client's handles stay \
            open; an open on a full handle table sends them and succeeds; closing every descriptor sends them at \
            once; no frame leaked",
    cmdline: "run=fs-closes",
    expect: &["fsd: serving files", "fsd: stopped after", "fs-closes: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const FS_AHEAD: Scenario = Scenario {
    name: "fs-ahead",
    about: "a prefetching open of a file in the directory of the one before also opens the files that follow \
            (flags::AHEAD): 24 files read in turn with a request for every three or more, each right; after this \
            process's rename, create and unlink their paths open what they name now; after another process renames \
            one and replaces another (the server's name generation moved) the first no longer opens and the second \
            reads new; a file written after it came along reads new; no handle is left at the server; the window \
            widens (flags::AHEAD_WIDE) once a batch was all taken: 48 files in 3 requests, and past the client \
            AHEAD_WIDE alone takes nothing, AHEAD exactly AHEAD_MAX, both AHEAD_WIDE_MAX; no frame leaked",
    cmdline: "run=fs-ahead",
    expect: &["fsd: serving files", "fsd: stopped after", "fs-ahead: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const FS_BEHIND: Scenario = Scenario {
    name: "fs-behind",
    about: "a small file's first write waits behind in the client's buffer (flags::BEHIND) until the server's next \
            request from anyone: create, write and close cost one request, and this process, a forked child and the \
            file's status see the bytes; a reader with the file's bytes from its open before another process's \
            granted open, and one that opens it while the grant stands, read the write once it returned; a record \
            still waiting is taken before the buffer is written again; forged records (not the client's handle, a \
            reader's, one opened without BEHIND, an appending one, a length past the room, a second record, one \
            after a SEEK ended the grant) change nothing, and the granted one is written",
    cmdline: "run=fs-behind",
    expect: &["fsd: serving files", "fsd: stopped after", "fs-behind: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const FS_PREFETCH: Scenario = Scenario {
    name: "fs-prefetch",
    about: "a small file's bytes come with its open (flags::PREFETCH) into the client's buffer: read whole and to its \
            end with no round trip (the server's run count stays), a partial read then a seek and a forked child's \
            read go on from where it ended, another process's write after the open and this process's own write and \
            truncate through a second descriptor are seen (the server's generation page moved), a file larger than \
            the buffer is read through the server; mapping the generation page writable is refused; no frame leaked",
    cmdline: "run=fs-prefetch",
    expect: &["fsd: serving files", "fsd: stopped after", "fs-prefetch: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};
