//! The call table.
//!
//! Each entry is `index => name(args…) -> [results…];` with a doc comment that
//! says what the call **checks** and what it **changes**. `for_each_call!(m)`
//! expands `m!` with the whole table; the kernel's dispatch
//! (`kernel/src/syscall.rs`) and the libOS stubs (`libos/rt/src/sys.rs`) are both
//! generated that way, and [`Call`](crate::Call) below is too.

/// Expands the macro `$m` with the complete call table.
///
/// The table's grammar, per entry:
/// `$(#[doc])* $index:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rclass:ident)?),*];`
///
/// Each argument's class (see [`arg_class`](crate::arg_class)) says what the
/// register holds; the kernel's dispatch decodes and checks it by its class.
/// The class `Msg` is the nine message registers of a protected control
/// transfer (`MSG_REGS`), not a numbered argument register; a result of
/// class `Reply` is the callee's answer (its id in `rdi`, the message
/// registers), written by the callee's `pct_reply`, not by this call's
/// completion. A plain result is one register of `rdi rsi rdx`.
#[macro_export]
macro_rules! for_each_call {
    ($m:path) => {
        $m! {
            /// Does nothing and returns. Used to measure the bare cost of
            /// entering and leaving the kernel.
            ///
            /// Checks: nothing. Changes: nothing.
            0 => null() -> [];

            /// Writes `len` bytes starting at user address `ptr` to the kernel
            /// console (the serial port), unmodified.
            ///
            /// Checks: every byte of `[ptr, ptr+len)` lies below
            /// [`layout::USER_TOP`](crate::layout::USER_TOP) and is mapped
            /// user-readable in the caller's page table
            /// ([`Error::BadAddress`](crate::Error::BadAddress) otherwise;
            /// a zero-length range is accepted at any `ptr` below
            /// `USER_TOP`, mapped or not, aligned or not, and writes nothing);
            /// `len` ≤ [`CONSOLE_WRITE_MAX`](crate::CONSOLE_WRITE_MAX)
            /// ([`Error::Invalid`](crate::Error::Invalid)); then, for a
            /// non-empty range, that the caller holds a capability for the
            /// console ([`cap_kind::CONSOLE`](crate::cap_kind::CONSOLE))
            /// with write, in any slot (`Denied`). Boot programs get one
            /// from the kernel; the libOS passes it on to children.
            /// Changes: nothing but the console. Returns the bytes written.
            1 => console_write(ptr: UserPtr, len: Len) -> [written];

            /// Ends the calling environment with exit status `code` (its
            /// [`EXIT_PROGRAM_BITS`](crate::EXIT_PROGRAM_BITS): the code in
            /// the low 32 bits and flags of the program's own). The
            /// kernel logs the code, releases everything the environment
            /// owns and runs the next runnable environment; the call never
            /// returns. If its creator is alive, the environment stays in the
            /// table as an [`ENV_ZOMBIE`](crate::ENV_ZOMBIE) holding the
            /// status until the creator reaps it.
            ///
            /// Checks: nothing. Changes: destroys the caller.
            2 => env_exit(code: Word) -> [];

            /// Returns the caller's environment id.
            ///
            /// Checks: nothing. Changes: nothing.
            3 => env_self() -> [id];

            /// Returns the machine's physical memory: `total` usable frames
            /// found in the boot memory map, `free` frames not owned by anyone,
            /// and `frame_size` in bytes.
            ///
            /// Checks: nothing. Changes: nothing.
            4 => mem_info() -> [total, free, frame_size];

            /// Allocates a physical frame, zeroed, owned by the caller, and
            /// puts a capability for it (read, write, grant) in the caller's
            /// list. `pfn` is a frame number, or [`ANY_FRAME`](crate::ANY_FRAME)
            /// for any free frame. Returns the capability slot and the frame
            /// number.
            ///
            /// Checks: a specific frame exists, is RAM and is free
            /// (`Invalid`, `Busy`); a frame is free and the caller's
            /// account (see `env_limit`) and every ancestor have room for
            /// one more (`NoMemory`); the capability list has room
            /// (`NoMemory`, nothing allocated).
            /// Changes: the frame table entry (owner, generation unchanged);
            /// the caller's account.
            5 => frame_alloc(pfn: FrameChoice) -> [slot, frame];

            /// Frees the frame named by the capability in `slot` and drops
            /// that capability. Every other capability for the frame goes
            /// stale: the frame's generation advances.
            ///
            /// Checks: the capability names a live frame with read, write and
            /// grant rights (`BadCap`, `Denied`); the caller owns the frame
            /// (`Denied`); no page table maps it (`Busy`).
            /// Changes: the frame becomes free; the slot empties.
            6 => frame_free(slot: FrameCap) -> [];

            /// Copies the capability in `slot` into the list of the
            /// environment named by the capability in `env_slot`, with
            /// `rights` (a subset of the source's). Returns the slot in the
            /// target's list. The copy is derived from the source (see
            /// `cap_derive`): `cap_revoke` on the source takes it back.
            ///
            /// Checks: the source carries grant (`Denied`); `rights` are
            /// valid and no wider than the source's (`Invalid`, `Denied`);
            /// the environment capability carries write (`Denied`); the
            /// target's list has room (`NoMemory`); the derivation depth
            /// (`Invalid`, see `cap_derive`).
            /// Changes: one slot in the target's list.
            7 => cap_grant(slot: CapSlot, env_slot: EnvCap, rights: Rights) -> [target_slot];

            /// Empties slot `slot` of the caller's capability list.
            ///
            /// Checks: the slot holds a capability (`BadCap`); slot 0 (the
            /// caller's own capability) cannot be dropped (`Invalid`).
            /// Changes: the slot.
            8 => cap_drop(slot: CapSlot) -> [];

            /// Describes the capability in `slot`: its resource kind (see
            /// [`cap_kind`](crate::cap_kind)), the resource's number (frame
            /// number, environment id, time slot index; for a principal `p`
            /// of `/8/p`, and 0 for `/8` itself, every principal, and for a
            /// name below a principal, which acts as none), and its rights
            /// bits.
            ///
            /// Checks: the slot holds a capability (`BadCap`). Changes: nothing.
            9 => cap_info(slot: CapSlot) -> [kind, number, rights];

            /// Maps the frame named by `frame_slot` at `va` in the address
            /// space of the environment named by `env_slot` (slot 0: the
            /// caller), with `flags` (`pte::WRITABLE`, `pte::NO_EXECUTE`,
            /// libOS bits). The secure binding: the check happens here, once.
            ///
            /// Checks: the environment capability carries write, and
            /// [`rights::EXECUTE`](crate::rights::EXECUTE) if the mapping
            /// is executable (`flags` without `NO_EXECUTE`) (`Denied`);
            /// `flags` has no bit besides those above (`Invalid`);
            /// the frame capability names a live frame (`BadCap`) with read,
            /// and write if `flags` asks for it (`Denied`); `va` is
            /// page-aligned and below `USER_TOP` (`BadAddress`); nothing is
            /// mapped there (`Exists`); the page-table frames the mapping
            /// needs (up to 3) fit the target environment's account and its
            /// ancestors (see `env_limit`), and memory for them (`NoMemory`,
            /// nothing changed).
            /// Changes: one page-table entry; the frame's mapping count; new
            /// page-table frames, charged to the target's account (they
            /// stay, and stay charged, until its teardown is finished).
            10 => page_map(env_slot: EnvCap, frame_slot: FrameCap, va: UserPage, flags: PageFlags) -> [];

            /// Removes the mapping at `va` in the environment named by
            /// `env_slot`.
            ///
            /// Checks: write on the environment (`Denied`); `va` aligned and
            /// below `USER_TOP` (`BadAddress`); something is mapped
            /// (`NotFound`). Changes: one entry; the frame's mapping count.
            11 => page_unmap(env_slot: EnvCap, va: UserPage) -> [];

            /// Changes the flags of the mapping at `va`. Removing rights or
            /// changing libOS bits needs nothing more; adding write needs
            /// `frame_slot` to hold, with write, either a capability for the
            /// mapped frame or an environment capability for the frame's
            /// owner (an environment's capability covers the frames it owns,
            /// as a Xok page is guarded by its owner's capability). So a
            /// process can drop a frame's own capability once it is mapped
            /// and still re-enable write later (copy-on-write, `unprot`).
            ///
            /// Checks: as `page_unmap`, plus execute on the environment
            /// capability if the new flags leave the page executable
            /// (`Denied`), no unknown bit in `flags` (`Invalid`), and the
            /// capability when write is added (`BadCap`, `Denied`; always
            /// `Denied` for a page of the boot archive, see `page_batch`'s
            /// share). Changes: one entry.
            12 => page_protect(env_slot: EnvCap, va: UserPage, flags: PageFlags, frame_slot: CapSlot) -> [];

            /// Applies `count` [`MapEntry`](crate::MapEntry) records at user
            /// address `entries` to the environment named by `env_slot`, in
            /// order: a map, an unmap (`frame_slot == UNMAP`), a protect
            /// (`frame_slot == PROTECT`, with the capability for adding
            /// write in `src`), a share (`frame_slot == SHARE`) or a fresh
            /// frame (`frame_slot == FRESH`) each.
            ///
            /// A **fresh** record allocates a zeroed frame owned by the
            /// target, charged to the target's account (which must be the
            /// caller's own or nested inside it, as for `frame_alloc_for`),
            /// and maps it at `va`; no capability is made for it (the
            /// target's own environment capability covers the frames it
            /// owns). One entry instead of `frame_alloc_for`, a map and a
            /// `cap_drop`: fresh stacks, bss and demand-zero pages.
            ///
            /// A **copy** record (`frame_slot == COPY`) is a fresh record
            /// whose frame holds a copy of the page the caller can read at
            /// `src` (page-aligned: its own pages or the exposed tables),
            /// and which replaces whatever the target maps at `va` (released
            /// as an unmap would): a copy-on-write break, or a fork's
            /// private page, in one record.
            ///
            /// A **share** maps at `va` in the target the frame the caller
            /// itself maps at `src`: a binding passed on, never widened —
            /// write only if the caller's own mapping is writable, and only
            /// frames that belong to an environment (not the application
            /// area or other kernel frames). This is how fork gives a child
            /// the parent's pages copy-on-write, whoever owns them, and how
            /// a pipe's frame reaches both ends. A share whose `src` is a
            /// page of the exposed boot archive (`layout::BOOT_ARCHIVE` up
            /// to the end of its last page) maps that page of the archive:
            /// every environment reads it there already, so it travels
            /// read-only only, and so does a page of the archive the caller
            /// maps elsewhere; this is how a loader maps a program's text
            /// where it runs instead of copying it (the archive's files
            /// start on page boundaries). No protect adds write to such a
            /// page (`Denied`, whatever capability is presented).
            ///
            /// A share record may name a **run** of pages
            /// ([`MapEntry::share_run`](crate::MapEntry::share_run): up to
            /// [`SHARE_RUN_MAX`](crate::SHARE_RUN_MAX), the count minus one
            /// in the low bits of `src`): page *k* of the source to
            /// `va` + *k* pages, all inside one aligned block of
            /// `SHARE_RUN_MAX` pages of the target. The whole run is
            /// checked before any page is mapped — every source page as a
            /// single share's, the destination inside one block
            /// (`Invalid`) and below the application area
            /// (`BadAddress`), nothing mapped at any of its pages
            /// (`Exists`) — so a refused run maps nothing (the table it
            /// needs may stay, as for `page_map`). A fork passes on its
            /// pages a run at a time; a run counts as its pages toward the
            /// records applied before a restart.
            ///
            /// **Progress is precise, not all-or-nothing.** The call advances
            /// `entries` (rsi) and `count` (rdx) in the caller's registers as
            /// each record takes effect. On a bad record it stops and returns
            /// that record's error with `rsi` pointing at it and `rdx` the
            /// records left (the bad one included); every record before it
            /// has taken effect. After `SysInfo::restart_records` records
            /// ([`BATCH_STEP`](crate::BATCH_STEP) unless the cmdline word
            /// `restart_records=` says otherwise) the kernel returns to user mode with `rip` back on the
            /// `syscall` instruction, which continues the batch (Fluke's
            /// restart rule): no one waits inside the kernel.
            ///
            /// Checks: per record, as the single calls — a map as
            /// `page_map`, an unmap as `page_unmap`, a protect as
            /// `page_protect` — (page-table frames are charged to the target's account as for `page_map`; a
            /// map, protect or share record without `NO_EXECUTE` needs
            /// execute on the environment capability: `Denied`; unknown
            /// flag bits: `Invalid`); a share's `src` must be a user page
            /// or a page of the boot archive (`BadAddress`), mapped in the
            /// caller (`NotFound`) with at least the rights asked (`Denied`;
            /// an archive page never writable)
            /// and its frame must not be one the abort protocol is taking
            /// (`Denied`); a fresh record's target account must lie within
            /// the caller's (`Denied`) and have room (`NoMemory`), and
            /// nothing may be mapped at `va` (`Exists`); a copy record's
            /// `src` must be page-aligned and readable by the caller
            /// (`BadAddress`), its account as a fresh record's; the record array must be readable
            /// (`BadAddress`). A refused fresh or copy record changes no
            /// mapping (a copy's `va` keeps what it mapped) and takes no
            /// frame (page tables it made stay, as for `page_map`).
            /// Changes: as the single calls.
            13 => page_batch(env_slot: EnvCap, entries: UserPtr, count: Len) -> [];

            /// Creates an environment with an empty address space (its
            /// page-table root) and a capability list holding only its own
            /// capability (slot 0); no application area until it asks
            /// (`app_area_make`). It does not run until `env_run`. Returns
            /// the caller's new capability slot for it and its id.
            ///
            /// The new environment is charged (1 environment, 1 frame for
            /// its page-table root) to the caller's account (see
            /// `env_limit`).
            ///
            /// A table row is reused only after the teardown of its last
            /// environment is finished, and never once its generation (the
            /// id's upper 22 bits) has reached its limit: such a row is
            /// retired for good, so a stale capability or id never names a
            /// new environment.
            ///
            /// Checks: room in the environment table, the caller's list and
            /// the caller's account and its ancestors (`NoMemory`).
            /// Changes: a new environment; the caller's account.
            14 => env_create() -> [slot, id];

            /// Destroys the environment named by `env_slot` and releases
            /// everything it owns; the caller's capability slot empties.
            /// Destroyed by its creator, it leaves no zombie; destroyed by
            /// another holder of the capability, it becomes one (exit status
            /// `EXIT_KILLED | 0xff`) for its creator to reap.
            ///
            /// The release happens in bounded steps; until it is finished the
            /// destroyed environment stays charged to its account (1
            /// environment, its frames and page tables) and its table row
            /// is not reused, so a create/destroy loop holds no more than
            /// its account allows.
            ///
            /// Checks: the capability carries write (`Denied`) and names a
            /// live environment (`BadEnv`). Changes: as described.
            15 => env_destroy(env_slot: EnvCap) -> [];

            /// Makes the environment named by `env_slot` (if it was created
            /// and never run) runnable; it asks for spare time, so it gets
            /// its round-robin share of unowned slots until it (or whoever
            /// holds write on it) calls `slot_spare(env, 0)`.
            ///
            /// Checks: write (`Denied`), alive (`BadEnv`), room in the
            /// kernel heap for its x87/SSE image, made now that it will run
            /// (`NoMemory`; its account paid for it at `env_create`).
            /// Changes: its status; the spare-time request list.
            16 => env_run(env_slot: EnvCap) -> [];

            /// Copies the complete user-visible state of the environment
            /// named by `env_slot` — registers (a call in progress is
            /// encoded in them: a restartable call's advanced arguments, a
            /// sleeper's `env_sleep`, a waiting caller's `pct_wait`),
            /// upcall entries, exception stack, x87/SSE state (FXSAVE
            /// image), FS/GS bases, the transfer it serves (the interrupted
            /// state `pct_reply` resumes, the caller and ticket owed a
            /// reply), wakeup predicates with their parameters — into the
            /// [`EnvState`](crate::EnvState) (version
            /// [`ENV_STATE_VERSION`](crate::ENV_STATE_VERSION)) at user
            /// address `buf`. Works at any moment, whatever the environment
            /// is doing.
            ///
            /// Checks: read on the environment (`Denied`); `buf` writable
            /// (`BadAddress`). Changes: the caller's buffer.
            17 => env_get_state(env_slot: EnvCap, buf: UserPtr) -> [];

            /// Replaces the complete user-visible state of the environment
            /// named by `env_slot` with the [`EnvState`](crate::EnvState) at
            /// `buf`. Selectors and privileged flags are forced to user
            /// values. Replacing the caller's own state resumes it from the
            /// new state. Sleep and wait end: a sleeper or a waiting caller
            /// runs the new registers (which may say `env_sleep` or
            /// `pct_wait` again); a reply to a call it waited for is
            /// dropped, never written over the new state. A serving record
            /// stays owed only if the environment already owed exactly that
            /// reply; otherwise the imported one is served with the reply
            /// owed to nobody (`pct_reply` still resumes the saved state),
            /// and whoever waited for a reply the environment owed resumes
            /// from its `pct_wait` with `BadEnv`.
            ///
            /// Checks: write on the environment (`Denied`); `buf` readable
            /// (`BadAddress`); `version` is `ENV_STATE_VERSION`, `rip`,
            /// `rsp` (also of the served transfer's saved state) and upcall
            /// entries canonical and strictly below `USER_TOP` (`rsp ==
            /// USER_TOP` too), FS/GS bases below
            /// `USER_TOP`, MXCSR with no reserved bit, `pct.serving` 0 or 1,
            /// every predicate verifies (`Invalid`); kernel memory for the
            /// predicates and, if it has none yet, the x87/SSE image and
            /// (serving a call or with a `PCT` entry) the room for a served
            /// call's saved state (`NoMemory`). Nothing changes unless every check
            /// passes. Changes: the state.
            18 => env_set_state(env_slot: EnvCap, buf: UserPtr) -> [];

            /// Sets upcall entry `kind` (see [`upcall`](crate::upcall)) of
            /// the environment named by `env_slot` to `entry` (0 removes it).
            ///
            /// Checks: write on the environment (`Denied`); `kind` known and
            /// `entry` below `USER_TOP` (`Invalid`); for a `PCT` entry, the
            /// first time, kernel memory for the state a served call
            /// interrupts (`NoMemory`; the room is kept). Changes: one entry.
            19 => upcall_register(env_slot: EnvCap, kind: Word, entry: Word) -> [];

            /// Asks the environment named by `env_slot` to give back `count`
            /// frames within `deadline` TSC cycles (revocation upcall). If it
            /// has not freed that many by then, the abort protocol takes the
            /// rest, whatever the target is doing (enforced from the timer,
            /// in bounded, restartable rounds of at most 32 frames): first
            /// listed frames only it maps, then unmapped ones, then frames
            /// only it maps (highest first), then frames others map too. It
            /// removes every mapping of each taken frame in every
            /// environment, frees it, and records it in the target's
            /// application area (if it has one); a taken frame one of the
            /// target's packet rings pins takes the ring with it (unbound,
            /// its filters removed). `count` 0 cancels the request.
            ///
            /// Checks: write on the environment (`Denied`), alive (`BadEnv`).
            /// Changes: the target's pending revocation.
            20 => frame_revoke(env_slot: EnvCap, count: Len, deadline: Word) -> [];

            /// Gives up the CPU (the rest of the current slot). With
            /// `target` 0 the next slot begins at once (plain yield).
            /// Otherwise the rest of the slot goes to environment `target`
            /// (directed yield), which runs now, faces the same slot end,
            /// and needs neither slots nor spare time of its own. Either way
            /// the caller stays runnable and resumes, registers intact
            /// (`rax` 0), at its next turn. A yield is how a slot-end
            /// handler ends its slot in time (ticks it ran past the slot's
            /// end are charged; strikes reset).
            ///
            /// `target` is a target word ([`call_target`](crate::call_target)):
            /// the environment id in the low 32 bits, and in the high 32
            /// bits the slot of the caller's capability for it, which must
            /// carry [`rights::CALL`](crate::rights::CALL) — the target
            /// (or whoever created it) hands that out, so nobody can push
            /// its time onto an environment that did not agree.
            ///
            /// Checks: the id is 0 or names a live environment (`BadEnv`;
            /// the caller's own id is a plain yield and needs no
            /// capability) that can run now (`Busy`: created, sleeping or
            /// waiting for a reply); the slot holds a capability for that
            /// environment (`BadCap`) with call (`Denied`). If no time is
            /// left in the slot the yield is plain. Changes: who runs; a
            /// plain yield (target 0 or the caller) also evaluates sleepers'
            /// predicates, as a tick does; a directed one evaluates none,
            /// so a hand-off costs the same however many environments sleep.
            21 => yield_cpu(target: Target) -> [];

            /// Synchronous protected control transfer to environment
            /// `target` (in `rdi`, a target word as for `yield_cpu`: the
            /// id, and the slot of the caller's capability for it with
            /// [`rights::CALL`](crate::rights::CALL)). Every other general register is the
            /// message and reaches the callee intact, except: `rdi` becomes
            /// the caller's id (supplied by the kernel, unforgeable), `rcx`
            /// is 1 (synchronous), `rax` 0, `rsp` 0 (the callee's entry sets
            /// up its own stack). The callee runs at once, at its `PCT`
            /// upcall entry, on the caller's time; the caller waits until
            /// the callee's `pct_reply`, and then resumes with the callee's
            /// registers as the reply (`rdi` = the callee's id; `msg` and
            /// `reply` name the nine message registers, see
            /// [`regs::MSG_REGS`](crate::regs::MSG_REGS)). If the
            /// callee dies first, or its state is replaced so that it no
            /// longer serves the call, the call fails with `BadEnv`. While
            /// it waits, the caller's exported registers say
            /// `pct_wait(target, ticket)` on the `syscall` (see `pct_wait`);
            /// on failure `rsi` holds the ticket if the callee got the
            /// message, and 0 if the call was refused before it did. A reply to a caller whose
            /// state was replaced meanwhile is dropped.
            ///
            /// Checks: `target` is a live environment other than the caller
            /// (`BadEnv`, `Invalid`) with a `PCT` entry — an environment
            /// accepts calls by registering one (`Denied`) — that is not
            /// already serving a call or waiting for a reply, and has run
            /// (`Busy`: also for a created environment never started with
            /// `env_run`); the capability slot holds a capability for it
            /// (`BadCap`) with call (`Denied`) — the callee or its creator
            /// hands those out (boot programs started together get them
            /// for each other). Changes: who runs; the caller waits.
            22 => pct_call(target: Target, msg: Msg) -> [reply: Reply];

            /// Asynchronous protected control transfer: as `pct_call` (the
            /// message `msg` in the message registers), but
            /// `rcx` is 0 at the callee, and the caller does not wait: it
            /// donates the rest of its time to the callee and stays
            /// runnable (this call returns 0 to it when it next runs).
            ///
            /// Checks: as `pct_call` (the capability with call included).
            /// Changes: who runs.
            23 => pct_send(target: Target, msg: Msg) -> [];

            /// Ends serving a protected control transfer. After a
            /// synchronous call from `caller`, the caller resumes with this
            /// environment's general registers as the reply (`reply`, the
            /// message registers, are what its `pct_call` returns); with `caller` 0
            /// (after an asynchronous one) nobody is resumed. Either way
            /// this environment then continues from the state it had when
            /// the call arrived. With `caller` [`PCT_OWED`](crate::PCT_OWED)
            /// the reply goes to whoever this environment owes it (the
            /// synchronous caller of the transfer it serves, or the one a
            /// restore bound with `pct_owe`; nobody after an asynchronous
            /// one), so a server need not name its caller by a physical id
            /// a restore would change.
            ///
            /// Checks: the environment is serving a call (`Invalid`);
            /// `caller` is 0, `PCT_OWED` or the environment waiting for it
            /// (`BadEnv`). Changes: who runs.
            24 => pct_reply(caller: Word, reply: Msg) -> [];

            /// Installs wakeup predicate number `index` (0..[`PREDICATES`](crate::PREDICATES))
            /// of the environment named by `env_slot`: `len` bytes of
            /// bytecode (format in [`pred`](crate::pred)) at user address
            /// `code`. The kernel verifies it once, here; its parameters
            /// start at zero.
            ///
            /// Checks: write on the environment (`Denied`); `index` and `len`
            /// in range (`Invalid`); the bytes readable (`BadAddress`); the
            /// program passes the verifier (`Invalid`). Changes: that slot.
            25 => pred_install(env_slot: EnvCap, index: Word, code: UserPtr, len: Len) -> [];

            /// Sets parameter `param` (0..8) of installed predicate `index`
            /// to `value`, without reinstalling or re-verifying.
            ///
            /// Checks: write on the environment (`Denied`); `index` and
            /// `param` in range (`Invalid`); the slot installed (`NotFound`).
            /// Changes: one word.
            26 => pred_param(env_slot: EnvCap, index: Word, param: Word, value: Word) -> [];

            /// Sleeps until one of the caller's predicates named by the bits
            /// of `mask` holds; returns the index of the first that does. The
            /// kernel evaluates them now, and then while the caller sleeps
            /// at every timer tick, every plain yield and every environment's end
            /// (so a parent waiting on its child's row wakes at once), and at
            /// every network or disk interrupt unless they read only the
            /// environment table and the clock page,
            /// reading memory through the caller's own page tables with user
            /// permissions — a predicate can never read
            /// memory its installer could not. A sleeping caller's state is
            /// "about to call `env_sleep(mask)`" (its `rip` is on the
            /// `syscall`), so state export captures the sleep; the evaluation
            /// that wakes it completes the call (the index it found, in the
            /// woken caller's registers), so the index names a predicate that
            /// held then, which may no longer hold when the caller runs.
            ///
            /// Checks: `mask` non-zero and within `PREDICATES` (`Invalid`);
            /// each named predicate index installed (`NotFound`); every read a predicate
            /// makes is mapped user-readable and aligned (`BadAddress`, also
            /// when the failing read happens while sleeping: the caller then
            /// wakes with that error). Changes: the caller may sleep.
            27 => env_sleep(mask: Word) -> [index];

            /// Allocates a frame, zeroed, **owned by the environment named by
            /// `env_slot`** (so it is freed when that environment is
            /// destroyed), and puts a full capability for it in the
            /// *caller's* list — the way a parent builds a child's address
            /// space (the libOS's exec) without the frames outliving the
            /// child. The caller may drop the capability once it has mapped
            /// the frame. `pfn` as for `frame_alloc`.
            ///
            /// The frame is charged to the target's account (see
            /// `env_limit`), which must be the caller's own account or one
            /// nested inside it: a caller spends only budget it is itself
            /// inside of.
            ///
            /// Checks: write on the environment (`Denied`); the target's
            /// account within the caller's (`Denied`); as `frame_alloc`.
            /// Changes: the frame table; the target's owned frames and
            /// account.
            28 => frame_alloc_for(env_slot: EnvCap, pfn: FrameChoice) -> [slot, frame];

            /// Names the environment named by `env_slot` (for logs and the
            /// exposed environment table): `len` bytes of UTF-8 at `ptr`,
            /// at most 32.
            ///
            /// Checks: write on the environment (`Denied`); `len` ≤ 32 and
            /// the bytes UTF-8 (`Invalid`); readable (`BadAddress`).
            /// Changes: the name.
            29 => env_rename(env_slot: EnvCap, ptr: UserPtr, len: Len) -> [];

            /// Copies up to `len` bytes of console input received so far to
            /// user address `ptr`; returns how many (0 when none is waiting:
            /// the call never blocks — sleep on `SysInfo::console_in`).
            ///
            /// Checks: `len` ≤ [`CONSOLE_WRITE_MAX`](crate::CONSOLE_WRITE_MAX)
            /// (`Invalid`); the buffer below `USER_TOP` and writable
            /// (`BadAddress`, nothing consumed; a zero-length buffer is
            /// accepted at any `ptr` below `USER_TOP` and reads nothing);
            /// then a console capability with read in the caller's list
            /// (`Denied`, nothing consumed).
            /// Changes: consumes the bytes returned.
            30 => console_read(ptr: UserPtr, len: Len) -> [read];

            /// Reaps an ended environment: returns its exit status (see
            /// [`EnvEntry::exit_status`](crate::EnvEntry::exit_status)) and
            /// frees its table row; the capability slot empties. An ended
            /// environment's row stays (a zombie) only while its creator is
            /// alive, so in practice the creator reaps — but what is checked
            /// is the capability, not the family tree. Until reaped, a
            /// zombie stays charged to its account as one environment (a
            /// row of the table like a live one).
            ///
            /// Checks: the slot holds a capability naming an environment
            /// (`BadCap`) with write (`Denied`, also while the environment
            /// still runs); it has ended (`Busy` while it runs); its row is
            /// waiting to be reaped (`BadEnv` if it is gone or already
            /// reaped). Changes: the row and the caller's slot.
            31 => env_reap(env_slot: CapSlot) -> [status];
            /// Allocates a CPU time slot of CPU 0's slot vector to the
            /// caller and puts a capability for it (read, write, grant;
            /// named `(cpu 0, index, generation)`) in the caller's list.
            /// `placement` chooses the slot (see
            /// [`slot_placement`](crate::slot_placement)): `ANY` the
            /// lowest free one, `AT` exactly slot `arg`, `NEAR` the first
            /// free one at or after `arg` (going round; pass one of your
            /// own slots for adjacent slots, which run as one stretch),
            /// `SPREAD` the free one farthest from the caller's own slots.
            /// Returns the capability slot and the slot's index. Ownership
            /// takes effect at the next slot boundary.
            ///
            /// The slot is charged to the caller's account (see
            /// `env_limit_slots`).
            ///
            /// Checks: `placement` known and `arg` inside the vector
            /// (`Invalid`); the caller's account and every ancestor have
            /// room for one more slot (`NoMemory`); `AT` a free slot
            /// (`Busy`); a free slot exists (`NoMemory`); room in the
            /// capability list (`NoMemory`, nothing allocated). Changes:
            /// one slot's owner and generation; one capability slot; the
            /// caller's account.
            32 => slot_alloc(placement: Word, arg: Word) -> [slot_cap, index];

            /// Frees the time slot named by the capability in `slot_cap` and
            /// drops that capability. The slot's generation advances, so
            /// every other capability naming it goes stale.
            ///
            /// Checks: the capability names a slot (`BadCap`) at its current
            /// generation (`BadCap`: stale) with write (`Denied`), owned by
            /// the caller (`Denied`). Changes: the slot becomes free; the
            /// capability slot empties.
            33 => slot_free(slot_cap: CapSlot) -> [];

            /// Gives the time slot named by `slot_cap` to the environment
            /// named by `env_slot`. The slot's generation advances: the
            /// giver's capability (and every other) goes stale, and the
            /// giver's capability slot empties. The receiver gets a fresh
            /// capability (read, write, grant) in its list; returns its slot
            /// there.
            ///
            /// Checks: as `slot_free`; write on the target environment
            /// (`Denied`, `BadEnv`); room in the target's list and, when
            /// the target is charged to another account, room for one more
            /// slot in that account and its ancestors (`NoMemory`, nothing
            /// changed). Changes: the slot's owner and generation; one
            /// capability slot in each list; the slot's charge moves to the
            /// receiver's account.
            34 => slot_give(slot_cap: CapSlot, env_slot: EnvCap) -> [target_slot];

            /// Makes the environment named by `env_slot` ask for spare time
            /// (`on` ≠ 0) or stop asking (`on` = 0). Slots that are unowned,
            /// whose owner cannot run, or whose owner forfeits them to repay
            /// debt are lent round robin to runnable environments that ask.
            /// Every environment asks from the moment it becomes runnable
            /// (boot programs, `env_run`), so programs that never touch
            /// slots share the CPU round robin; an environment (or its
            /// parent, e.g. a user-level scheduler that runs its children
            /// only by donating time) turns it off with `on` = 0.
            ///
            /// Checks: write on the environment (`Denied`, `BadEnv`).
            /// Changes: the spare-time request list.
            35 => slot_spare(env_slot: EnvCap, on: Word) -> [];

            /// Puts the environment named by `env_slot` into a **new
            /// sub-account** of the account it is charged to now, limited
            /// to `frames` frames and `envs` environments (its CPU slots
            /// limited only by the ancestors: see `env_limit_slots`). Every
            /// environment is charged to one account: 1 environment plus 1
            /// frame (its page-table root) when created, 1 frame per
            /// frame it owns (`frame_alloc`, `frame_alloc_for`, its loader)
            /// and 1 per page-table frame its mappings made (`page_map`,
            /// `page_batch`), 1 for its application area and the tables
            /// that map it (`app_area_make`); freeing and repossession give frames back,
            /// and the end of its teardown after death gives back the rest. A new
            /// environment is charged to its creator's account, so
            /// everything the environment creates from now on shares the
            /// new budget. Its current charges move into the new account.
            ///
            /// Accounts nest, and a charge counts against the account and
            /// **every ancestor**: limits only ever narrow. Asking for more
            /// than the current account allows is accepted but gains
            /// nothing (the ancestor's limit binds first). Any environment
            /// may restrict itself (slot 0); a parent typically limits a
            /// child before `env_run`. Beyond a limit, the charging call
            /// (`env_create`, `frame_alloc`, …) fails with `NoMemory`.
            ///
            /// Checks: write on the environment (`Denied`, `BadEnv`); the
            /// new account at most [`ACCOUNT_MAX_DEPTH`](crate::ACCOUNT_MAX_DEPTH)
            /// below the root (`Invalid`); its current charges fit the new
            /// limits and kernel memory for the account (`NoMemory`,
            /// nothing changed). Changes: the environment's account (the
            /// `account` field of its environment-table row).
            36 => env_limit(env_slot: EnvCap, frames: Word, envs: Word) -> [];

            /// Reports the account the environment named by `env_slot` is
            /// charged to: for resource `kind` ([`ACCOUNT_FRAMES`](crate::ACCOUNT_FRAMES),
            /// [`ACCOUNT_ENVS`](crate::ACCOUNT_ENVS),
            /// [`ACCOUNT_SLOTS`](crate::ACCOUNT_SLOTS) or
            /// [`ACCOUNT_HEAP`](crate::ACCOUNT_HEAP), in bytes) the amount charged
            /// to the account and every account nested in it, and the
            /// account's own limit ([`ACCOUNT_UNLIMITED`](crate::ACCOUNT_UNLIMITED)
            /// for none; an ancestor's may bind first); and the account's
            /// number (as in the environment table). Frames include page
            /// tables (each row's `frames + tables + 1`) and destroyed
            /// environments still being torn down.
            ///
            /// Checks: read on the environment (`Denied`, `BadEnv`); `kind`
            /// known (`Invalid`). Changes: nothing.
            37 => account_info(env_slot: EnvCap, kind: Word) -> [used, limit, account];

            /// Sets the FS base (`which` = [`BASE_FS`](crate::BASE_FS)) or
            /// the GS base ([`BASE_GS`](crate::BASE_GS)) of the environment
            /// named by `env_slot` to `value`: `%fs:`/`%gs:` addressing then
            /// starts there (thread-local storage; Linux's `arch_prctl`).
            /// Each environment has its own pair, switched with it, zero
            /// when created, part of [`EnvState`](crate::EnvState). (A
            /// program that loads a segment selector into FS or GS resets
            /// that base, as the CPU does.)
            ///
            /// Checks: write on the environment (`Denied`, `BadEnv`);
            /// `which` known and `value` below
            /// [`layout::USER_TOP`](crate::layout::USER_TOP) (`Invalid`).
            /// Changes: that base (at once, if it is the caller's own).
            38 => env_set_base(env_slot: EnvCap, which: Word, value: Word) -> [];

            /// Returns the FS base (`which` = [`BASE_FS`](crate::BASE_FS))
            /// or the GS base ([`BASE_GS`](crate::BASE_GS)) of the
            /// environment named by `env_slot`.
            ///
            /// Checks: read on the environment (`Denied`, `BadEnv`);
            /// `which` known (`Invalid`). Changes: nothing.
            39 => env_get_base(env_slot: EnvCap, which: Word) -> [value];

            /// Waits for the reply to the synchronous `pct_call` with
            /// `ticket` that environment `callee` serves. A program does not
            /// normally issue this itself: while a `pct_call` caller waits,
            /// its registers say `pct_wait(callee, ticket)` with `rip` on
            /// the `syscall` (Fluke's restart rule), so its exported state,
            /// imported into any environment (itself included), resumes
            /// the wait; the reply completes this call as it would have
            /// completed the `pct_call` (`rax` 0, the reply registers,
            /// `rdi` the callee). A ticket is unguessable and names one call
            /// for the machine's life.
            ///
            /// Checks: no capability — the ticket is the credential (only
            /// the call's exported state holds it; it names no callee for
            /// new calls, so it reaches nothing `pct_call` could not);
            /// `callee` is not the caller (`Invalid`); `callee` is
            /// alive and serving the call with `ticket`
            /// (`BadEnv`: that reply can never come — the callee died,
            /// replied already, or its state was replaced); no other
            /// environment waits for it (`Busy`; e.g. the original caller
            /// still does). Changes: the caller waits (`ENV_WAITING`) and
            /// gives the rest of its slot to the callee; the reply goes to
            /// it.
            40 => pct_wait(callee: Word, ticket: Word) -> [reply: Reply];

            /// While serving a synchronous protected control transfer,
            /// copies the capability in `slot` into the list of the caller
            /// being served, with `rights` (a subset of the source's), as
            /// `cap_grant` does: the copy is derived from the source, so
            /// `cap_revoke` on the source takes it back. The caller
            /// consented by calling, and no other list can be reached this
            /// way, so a server needs no capability for its clients (the
            /// file server hands each client its shared buffer page this
            /// way, Xok's page ACLs by capability). Returns the slot in the
            /// caller's list; the callee passes it on in its reply.
            ///
            /// Checks: the caller of this call is serving a synchronous
            /// transfer (`Invalid`) whose caller still waits for it
            /// (`BadEnv`); the source carries grant (`Denied`); `rights`
            /// valid and no wider than the source's (`Invalid`, `Denied`);
            /// room in the served caller's list (`NoMemory`); the
            /// derivation depth (`Invalid`, see `cap_derive`).
            /// Changes: one slot in the served caller's list.
            41 => pct_grant(slot: CapSlot, rights: Rights) -> [target_slot];

            /// Derives a narrower capability from the one in `slot`: the
            /// same name with `rights` (a subset of the source's), in the
            /// first free slot of the caller's own list; returns that slot.
            /// The child is recorded as derived from the source, so
            /// `cap_revoke` on the source (or on anything the source was
            /// derived from) takes it — and everything later derived or
            /// granted from it, in any list — away. At most
            /// [`CAP_DERIVE_DEPTH`](crate::CAP_DERIVE_DEPTH) derivations
            /// (grants included) below the first.
            ///
            /// Checks: the slot holds a capability (`BadCap`); `rights`
            /// valid (`Invalid`) and no wider than the source's (`Denied`);
            /// the derivation depth (`Invalid`); room in the list
            /// (`NoMemory`). Needs no right: a child only ever has less.
            /// Changes: one slot of the caller's list.
            42 => cap_derive(slot: CapSlot, rights: Rights) -> [new_slot];

            /// Revokes everything derived from the capability in `slot`:
            /// removes from **every** environment's list each capability
            /// that `cap_derive` or `cap_grant` made from it, directly or
            /// through any number of further derivations and grants.
            /// Returns how many were removed. The capability in `slot`
            /// itself stays (drop it with `cap_drop`); bindings already made
            /// with a removed capability (mappings) stay too — frames are
            /// taken back with `frame_revoke`. Atomic: one pass over a
            /// table of constant size.
            ///
            /// Checks: the slot holds a capability (`BadCap`). Needs no
            /// right: only what came from the caller's own capability goes.
            /// Changes: slots of any list.
            43 => cap_revoke(slot: CapSlot) -> [removed];

            /// Puts the environment named by `env_slot` into a **new
            /// sub-account** of the account it is charged to now, limited
            /// to `slots` CPU time slots (frames and environments limited
            /// only by the ancestors), as `env_limit` does for frames and
            /// environments. Every slot an environment owns is charged to
            /// its account and every ancestor: `slot_alloc` charges one,
            /// a slot received by `slot_give` is charged to the receiver's
            /// account (and given back by the giver's), `slot_free` and
            /// death give it back. So a process tree holds at most the
            /// slots its account allows, whatever its members do.
            ///
            /// Checks: write on the environment (`Denied`, `BadEnv`); the
            /// new account at most [`ACCOUNT_MAX_DEPTH`](crate::ACCOUNT_MAX_DEPTH)
            /// below the root (`Invalid`); the slots it owns now fit
            /// `slots`, and kernel memory for the account (`NoMemory`,
            /// nothing changed). Changes: the environment's account.
            44 => env_limit_slots(env_slot: EnvCap, slots: Word) -> [];

            /// Stops (`on` 1) or continues (`on` 0) the environment named
            /// by `env_slot` — what a checkpointer or debugger needs to read
            /// a state that does not change under it. A stopped environment
            /// is never given the CPU: not in its own slots, not in spare
            /// time, not by a directed yield or a protected control transfer
            /// (both refused with `Busy`). Everything that happens *to* it
            /// still happens: a sleeper whose predicate holds becomes
            /// runnable, a reply to a call it waits for lands in its
            /// registers, it can be destroyed. Its exported state
            /// (`env_get_state`) therefore stays fixed until it is
            /// continued or its state is replaced.
            ///
            /// Checks: write on the environment (`Denied`), alive
            /// (`BadEnv`); not the caller itself and `on` 0 or 1
            /// (`Invalid`). Changes: its stopped flag.
            45 => env_stop(env_slot: EnvCap, on: Word) -> [];

            /// Lists the user mappings of the environment named by
            /// `env_slot` at or above `va`, in address order: up to `count`
            /// (at most [`MAPPINGS_MAX`](crate::MAPPINGS_MAX))
            /// [`Mapping`](crate::Mapping) records (page address, page-table
            /// flags, frame number) written at `buf`. The application area
            /// (the kernel's frame) is not listed. Returns how many records
            /// were written and `next`, the address to continue from
            /// ([`USER_TOP`](crate::layout::USER_TOP) when the walk is
            /// complete); at most 16 page tables are examined per call, so
            /// `found` may be 0 with `next` below `USER_TOP`.
            ///
            /// Checks: read on the environment (`Denied`); `va` page-aligned
            /// and below `USER_TOP` (`BadAddress`); `count` from 1 to
            /// `MAPPINGS_MAX` (`Invalid`); `buf` writable for the records
            /// written (`BadAddress`). Changes: the caller's buffer.
            46 => env_mappings(env_slot: EnvCap, va: Word, buf: UserPtr, count: Len) -> [found, next];

            /// Copies the page mapped at `va` in the environment named by
            /// `env_slot` (4096 bytes) to the caller's `buf`; returns the
            /// mapping's page-table flags. Reading another environment's
            /// memory needs no mapping of its frames.
            ///
            /// Checks: read on the environment (`Denied`); `va`
            /// page-aligned, below `USER_TOP` and not the application area
            /// (`BadAddress`); a user frame or a page of the boot archive
            /// mapped there (`NotFound`); `buf` writable for 4096 bytes
            /// (`BadAddress`).
            /// Changes: the caller's buffer.
            47 => env_peek(env_slot: EnvCap, va: Word, buf: UserPtr) -> [flags];

            /// Describes capability `slot` in the list of the environment
            /// named by `env_slot`, as `cap_info` describes the caller's own:
            /// kind, resource number, rights.
            ///
            /// Checks: read on the environment (`Denied`); the slot holds a
            /// capability (`BadCap`). Changes: nothing.
            48 => cap_peek(env_slot: EnvCap, slot: CapSlot) -> [kind, number, rights];

            /// Copies capability `slot` of the environment named by
            /// `env_slot` into the caller's own list, with `rights` (a subset
            /// of the source's); returns the caller's new slot. The copy is
            /// derived from the source, so `cap_revoke` on the source (or
            /// anything it came from) takes it back. This is how a
            /// checkpointer holding a process reaches the process's children:
            /// write on an environment already lets its holder replace the
            /// environment's registers and memory, and so make it grant what
            /// it holds; this call adds no authority beyond that.
            ///
            /// Checks: write on the environment (`Denied`); the slot holds a
            /// capability (`BadCap`) carrying grant (`Denied`); `rights`
            /// valid and no wider than the source's (`Invalid`, `Denied`);
            /// room in the caller's list (`NoMemory`); the derivation depth
            /// (`Invalid`). Changes: one slot of the caller's list; the
            /// source's derivation record.
            49 => cap_copy(env_slot: EnvCap, slot: CapSlot, rights: Rights) -> [new_slot];

            /// Sends up to `len` bytes at `ptr` on the machine's second
            /// serial line (COM2), raw, as far as the transmitter takes them
            /// without waiting; returns how many it took (0 when it is busy:
            /// try again after a yield). The line joins two machines (QEMU's
            /// socket character device); the checkpointer migrates a process
            /// over it. It is part of the console device: the same
            /// capability guards it.
            ///
            /// Checks: a second serial line exists (`NotFound`); `len` ≤
            /// [`CONSOLE_WRITE_MAX`](crate::CONSOLE_WRITE_MAX) (`Invalid`);
            /// the range readable (`BadAddress`); a console capability with
            /// write (`Denied`). Changes: nothing but the line.
            50 => aux_write(ptr: UserPtr, len: Len) -> [written];

            /// Copies to `ptr` the bytes waiting on the second serial line,
            /// at most `len` (and at most 512); never waits.
            ///
            /// Checks: a second serial line exists (`NotFound`); `len` ≤
            /// `CONSOLE_WRITE_MAX` (`Invalid`); the buffer writable
            /// (`BadAddress`, nothing consumed); a console capability with
            /// read (`Denied`). Changes: the caller's buffer; the line's
            /// receiver.
            51 => aux_read(ptr: UserPtr, len: Len) -> [read];
            /// Describes the network: the NIC's Ethernet address (bytes 0–5
            /// of `mac`, first byte lowest), packets received since boot,
            /// and those no filter accepted.
            ///
            /// Checks: the machine has a NIC (`NotFound`). Changes: nothing.
            52 => net_info() -> [mac, received, unclaimed];

            /// Binds a packet ring over `count` frames whose capability
            /// slots are the `count` `u64`s at `slots`: the header frame,
            /// then 1..=[`RING_DATA_FRAMES_MAX`](crate::net::RING_DATA_FRAMES_MAX)
            /// entry frames (layout in [`net`](crate::net)). The frames
            /// are pinned (counted as mapped) until the ring is unbound or
            /// the caller ends. Returns the ring's number.
            ///
            /// Checks: `count` in range (`Invalid`); the slots are readable
            /// (`BadAddress`); each names a live frame with read and write
            /// (`BadCap`, `Denied`) **owned by the caller** (`Denied`: a
            /// ring never points into another environment's frames); no
            /// frame twice (`Invalid`); at most
            /// [`RINGS_PER_ENV`](crate::net::RINGS_PER_ENV) rings per
            /// environment, kernel memory and the account's heap for the
            /// ring's record (`NoMemory`).
            /// Changes: a new ring, charged to the caller's account until
            /// unbound; the frames' mapping counts.
            53 => ring_bind(slots: UserPtr, count: Len) -> [ring];

            /// Unbinds the caller's ring `ring` (its filters are removed)
            /// and unpins its frames; the ring's charge and its filters'
            /// go back to the caller's account.
            ///
            /// Checks: the ring exists (`NotFound`) and is the caller's
            /// (`Denied`). Changes: the ring is gone.
            54 => ring_unbind(ring: Word) -> [];

            /// Sets the transmit template (a
            /// [`TxTemplate`](crate::net::TxTemplate) at `template`) of the
            /// environment named by `env_slot`: every packet it sends must
            /// match it. The first templates come from boot programs (for
            /// themselves or their children); a template holder may give
            /// itself or a child one that is narrower than its own.
            ///
            /// Checks: write on the environment (`Denied`, `BadEnv`); the
            /// template readable (`BadAddress`) and well formed (`Invalid`);
            /// the target is the caller or its child, and the caller is a
            /// boot program without a template or the new template lies
            /// within the caller's own (`Denied`).
            /// Changes: the target's template.
            55 => net_template(env_slot: EnvCap, template: UserPtr) -> [];

            /// Sends one Ethernet frame gathered from the `count`
            /// [`TxPiece`](crate::net::TxPiece)s at `pieces`, copied into a
            /// kernel transmit buffer. Returns the frame's length.
            ///
            /// Checks: `count` in 1..=[`TX_PIECES_MAX`](crate::net::TX_PIECES_MAX)
            /// (`Invalid`); the records readable (`BadAddress`); each piece
            /// inside its frame and the total at most
            /// [`PACKET_MAX`](crate::net::PACKET_MAX) (`Invalid`); read on
            /// each frame (`BadCap`, `Denied`); the caller has a template
            /// and the frame's headers match it
            /// ([`template_violation`](crate::net::template_violation);
            /// `Denied`); a NIC (`NotFound`); a free transmit buffer
            /// (`WouldBlock`). Changes: the packet is queued on the NIC.
            56 => net_send(pieces: UserPtr, count: Len) -> [len];

            /// Installs the packet filter at `filter` (a
            /// [`FILTER_BYTES`](crate::filter::FILTER_BYTES) block, format
            /// in [`filter`](crate::filter)) feeding the caller's ring
            /// `ring`: every received packet it accepts (the most specific
            /// filter wins) is copied into the ring. `refines` is the
            /// capability slot of an installed filter the new one narrows,
            /// or `u64::MAX` for none. Returns the slot of the new filter's
            /// capability (read, write, grant) and the filter's number.
            ///
            /// Checks: the block readable (`BadAddress`) and verified
            /// (`Invalid`: bad atoms, reads beyond
            /// [`MAX_PACKET`](crate::filter::MAX_PACKET), contradictions);
            /// `refines` names an installed filter with write (`BadCap`,
            /// `Denied`); the ring is the caller's (`NotFound`, `Denied`);
            /// receiving is bound as sending is: the filter accepts only
            /// what the caller's transmit template could answer — ARP,
            /// ICMP to its address, TCP or UDP (first fragments, after the
            /// IPv4 header-length shift) to ports within its range — or
            /// anything for a template with every port; without a template
            /// only a boot program installs (`Denied`); the filter **cannot accept any packet another installed
            /// filter accepts** unless it strictly narrows the one it
            /// refines (`Exists` for an overlap, `Invalid` for a
            /// non-refinement); at most
            /// [`FILTERS_PER_ENV`](crate::net::FILTERS_PER_ENV) filters of
            /// the caller's, room in the table, the capability list and
            /// kernel memory (`NoMemory`). Changes: the filter table; one
            /// capability slot.
            57 => filter_install(ring: Word, filter: Word, refines: Word) -> [slot, id];

            /// Removes the filter named by the capability in `slot` and
            /// empties the slot; filters that refined it now refine the one
            /// it refined. Filters also go when their ring is unbound or
            /// their installer ends.
            ///
            /// Checks: the capability names an installed filter (`BadCap`)
            /// with write (`Denied`). Changes: the filter table; the slot.
            58 => filter_remove(slot: CapSlot) -> [];

            /// Reports the transmit template of the environment named by
            /// `env_slot`: the Ethernet address (bytes 0–5 of `mac`, first
            /// byte lowest), the IPv4 address (bytes 0–3 of `ip`, in packet
            /// order) and the source ports (`port_lo | port_hi << 16`).
            /// A parent passes its own on to a child this way
            /// (`net_template` with the same values).
            ///
            /// Checks: read on the environment (`Denied`, `BadEnv`); it has
            /// a template (`NotFound`). Changes: nothing.
            59 => net_template_get(env_slot: EnvCap) -> [mac, ip, ports];

            /// Registers a library file system with XN: `count` templates
            /// (layout in [`xn`](crate::xn)) back to back in the `len`
            /// bytes at `templates`, verified and written to the disk's
            /// catalogue. Returns `[0, fs, 0]`, or
            /// `[`[`xn::REJECTED`](crate::xn::REJECTED)`, reject, index]`
            /// when template `index` fails verification (a loop that does
            /// not end, a load past the block…; codes in
            /// [`xn::reject`](crate::xn::reject)).
            ///
            /// Checks: a disk (`NotFound`); `count` in
            /// 1..=[`MAX_TEMPLATES`](crate::xn::MAX_TEMPLATES) and `len` at
            /// most [`MAX_TEMPLATE_BYTES`](crate::xn::MAX_TEMPLATE_BYTES)
            /// (`Invalid`); the bytes readable (`BadAddress`); room for
            /// another of [`MAX_FS`](crate::xn::MAX_FS) file systems
            /// (`NoMemory`). Changes: XN's file systems; the catalogue.
            60 => xn_register(templates: UserPtr, len: Len, count: Len) -> [refusal, fs, detail];

            /// Makes the free XN block `block` a root of file system `fs`
            /// with template `ty` and the 4096-byte content at `content`
            /// (it must own nothing yet). The root is cached (one frame
            /// charged to the caller's account), tainted until written and
            /// flushed, and recorded in the catalogue after that.
            /// Every XN call returns `[refusal, block, detail]`: `refusal`
            /// 0 when done, else an [`xn::refuse`](crate::xn::refuse) code
            /// naming the block concerned (and for a tainted pointer the
            /// child in `detail`); nothing changed on a refusal.
            ///
            /// Checks: a disk (`NotFound`); the content readable
            /// (`BadAddress`); `fs` and `ty` fit in 32 bits (`Invalid`);
            /// fewer than [`MAX_ROOTS`](crate::xn::MAX_ROOTS)
            /// roots and the caller's account has a frame (`NoMemory`);
            /// XN's checks (refusal). Changes: the registry, free map,
            /// roots.
            61 => xn_root(fs: Word, block: Word, ty: Word, content: UserPtr) -> [refusal, at, detail];

            /// Allocates the free XN blocks `start..start+len` of type `ty`
            /// to the metadata block `meta`, whose new content (4096 bytes
            /// at `content`) must own exactly them in addition to what it
            /// owned (`owns` run before and after). The new blocks are
            /// tainted until written and flushed. Metadata blocks are cached
            /// at once as zeroed frames charged to the caller; data blocks
            /// (`ty` [`DATA`](crate::xn::DATA)) get no frame: one that holds
            /// nothing yet reads as zeros, and its first `xn_read`,
            /// `xn_bind` or `xn_write` caches a zeroed frame charged to that
            /// caller (never the disk's old bytes), while an `xn_write_from`
            /// onto it needs none.
            ///
            /// Checks: a disk (`NotFound`); `len` in
            /// 1..=[`MAX_EXTENT_CALL`](crate::xn::MAX_EXTENT_CALL)
            /// (`Invalid`); content readable (`BadAddress`); account room
            /// for `len` frames of metadata (`NoMemory`); `acl` over `meta` grants the
            /// caller write, the blocks are free, `owns` matches (refusal).
            /// Changes: registry, free map, the cached `meta`.
            62 => xn_alloc(meta: Word, content: UserPtr, start: Word, len: Len, ty: Word) -> [refusal, at, detail];

            /// Frees XN blocks `start..start+len` from `meta`, whose new
            /// content (at `content`) must own exactly them less. A block a
            /// durable write of `meta` may still point to waits on the
            /// will-free list until a later write of `meta` is durable.
            ///
            /// Checks: as `xn_alloc`; the blocks are owned by `meta`, have
            /// no write in flight, and a metadata block among them owns
            /// nothing (refusal). Changes: registry, free map, will-free
            /// list, the cached `meta`; the freed blocks' frames.
            63 => xn_free(meta: Word, content: UserPtr, start: Word, len: Len) -> [refusal, at, detail];

            /// Replaces the cached metadata block `meta` with the content at
            /// `content`, which must own exactly what it owned.
            ///
            /// Checks: a disk (`NotFound`); content readable
            /// (`BadAddress`); `acl` grants write, `owns` unchanged
            /// (refusal). Changes: the cached `meta` (dirty).
            64 => xn_modify(meta: Word, content: UserPtr) -> [refusal, at, detail];

            /// Brings the allocated XN block `block` into the cache: the
            /// kernel reads it from disk into a fresh frame (charged to the
            /// caller) and registers the frame when the read completes — no
            /// one else ever fills a cached block. A data block allocated
            /// and never written is cached at once as a zeroed frame, with
            /// no request (its disk bytes are a former owner's). Returns
            /// `[0, seq, 0]`: the request's sequence number (wait until
            /// [`XnHeader::oldest_pending`](crate::xn::XnHeader) is above
            /// it), or 0 when the block is already cached.
            ///
            /// Checks: a disk (`NotFound`); a free request slot
            /// (`WouldBlock`); account room (`NoMemory`); the block is live
            /// and no `xn_write_from` onto it is in flight (refusal).
            /// Changes: a request; later, the registry.
            65 => xn_read(block: Word) -> [refusal, seq, detail];

            /// Maps the frame caching XN block `block` at page `va` of the
            /// caller, readable, and writable when `want` has
            /// [`rights::WRITE`](crate::xn::rights::WRITE): the one rights
            /// check; afterwards the caller reads and writes the frame
            /// directly. Remove it with `page_unmap`. A data block
            /// allocated and never written is cached first as a zeroed
            /// frame charged to the caller, once every other check passed.
            ///
            /// Checks: a disk (`NotFound`); `va` page-aligned below
            /// `USER_TOP` (`BadAddress`); `want` non-zero and known
            /// (`Invalid`); the block live and cached (or never written),
            /// `acl` over it grants `want`, a metadata block never writable
            /// (refusal); account room for the frame of a block never
            /// written (`NoMemory`).
            /// Changes: the caller's page table; the registry for a block
            /// never written (its frame given back if the mapping then
            /// fails: a refused bind changes nothing).
            66 => xn_bind(block: Word, va: Word, want: Word) -> [refusal, at, detail];

            /// Writes the cached XN block `block` to disk from its frame (a
            /// data block never written is cached first as a zeroed frame
            /// charged to the caller, and written as those zeros).
            /// Returns `[0, seq, 0]` (see `xn_read`). A metadata block whose
            /// content points to a block not durably written is refused
            /// with [`refuse::TAINTED_POINTER`](crate::xn::refuse::TAINTED_POINTER)
            /// and the child in `detail`.
            ///
            /// Checks: a disk (`NotFound`); a free request slot
            /// (`WouldBlock`); the block live, cached, no write in flight,
            /// no pointer to a tainted block (refusal). Changes: a request;
            /// the block's state.
            67 => xn_write(block: Word) -> [refusal, seq, detail];

            /// Asks the disk to make every completed write durable (the
            /// only barrier). Returns `[0, seq, 0]`; once it completes,
            /// blocks written before it are no longer tainted and freed
            /// blocks whose last on-disk pointer is gone leave the will-free
            /// list (a bounded number per kernel entry).
            ///
            /// Checks: a disk (`NotFound`); a free request slot
            /// (`WouldBlock`). Changes: a request.
            68 => xn_flush() -> [refusal, seq, detail];

            /// Takes the clean, unmapped XN block `block` out of the cache
            /// and frees its frame (the charge goes back).
            ///
            /// Checks: a disk (`NotFound`); the block is cached, clean and
            /// durable, and no `xn_write_from` reads its frame (refusal);
            /// no mapping of its frame remains (`Busy`). Changes: the
            /// registry; the frame.
            69 => xn_evict(block: Word) -> [refusal, at, detail];

            /// Puts the environment named by `env_slot` into a **new
            /// sub-account** of the account it is charged to now, limited
            /// to `bytes` bytes of kernel heap (frames, environments and
            /// slots limited only by the ancestors), as `env_limit` does
            /// for frames. The kernel charges an account for every record
            /// it keeps for the account's environments: an environment's
            /// own record (its capability list and name included, charged
            /// by `env_create`), each installed predicate (`pred_install`,
            /// `env_set_state`), the kernel's entry for each frame it owns
            /// (with the frame), a transmit template (`net_template`),
            /// each packet filter (`filter_install`) and each packet ring
            /// (`ring_bind`); a destroyed environment's stay charged until
            /// its teardown ends, a filter's until it is removed, a ring's
            /// until it is unbound. Beyond the limit of the
            /// account or any ancestor the charging call fails with
            /// `NoMemory`, nothing changed; `account_info` with
            /// [`ACCOUNT_HEAP`](crate::ACCOUNT_HEAP) reports it.
            ///
            /// Checks: write on the environment (`Denied`, `BadEnv`); the
            /// new account at most [`ACCOUNT_MAX_DEPTH`](crate::ACCOUNT_MAX_DEPTH)
            /// below the root (`Invalid`); what it is charged now fits
            /// `bytes`, and kernel memory for the account (`NoMemory`,
            /// nothing changed). Changes: the environment's account.
            70 => env_limit_heap(env_slot: EnvCap, bytes: Word) -> [];

            /// Writes the XN data block `dst` to disk straight from the
            /// frame caching block `src` (XCP: the CPU never touches the
            /// data). Returns `[0, seq, 0]` (see `xn_read`). The source's
            /// frame stays cached and pinned — neither evicted nor freed —
            /// until the device has read it; `dst` leaves the cache (its old
            /// frame goes back; `xn_read` brings the copy in once the write
            /// is done). Taint as for `xn_write`: `dst` stays tainted until
            /// the write completes and a later flush completes, so a
            /// metadata block pointing to it reaches the disk only after.
            /// If the device fails the write and no write of `dst` ever
            /// completed, `dst` holds zeros again, as a block never written
            /// (the disk may still have a former owner's bytes there).
            ///
            /// Checks: a disk (`NotFound`); `dst` differs from `src`
            /// (`Invalid`); a free request slot (`WouldBlock`); `dst` live,
            /// data (a metadata block is
            /// [`refuse::METADATA_WRITABLE`](crate::xn::refuse::METADATA_WRITABLE)),
            /// `acl` over it grants the caller write, no read or write of it
            /// in flight, not itself a copy's pinned source; `src` live, `acl` over it
            /// grants read, cached, durably written (a tainted source is
            /// [`refuse::TAINTED`](crate::xn::refuse::TAINTED)) (refusals);
            /// no mapping of `dst`'s frame remains (`Busy`); kernel memory
            /// for the request (`NoMemory`). Changes: a request; `dst`'s
            /// state and cache frame; `src`'s pin count.
            71 => xn_write_from(dst: Word, src: Word) -> [refusal, seq, detail];

            /// Narrows the capability in `slot`: a child whose name is the
            /// source's followed by the one component `component`, with
            /// `rights` (a subset of the source's), in the first free slot
            /// of the caller's own list; returns that slot. The child covers
            /// only names below the source's (a capability on `/8`, every
            /// principal, narrowed by `p` is one on `/8/p`, principal `p`
            /// alone). Recorded as derived from the source, as `cap_derive`
            /// records its child: `cap_revoke` on the source takes it back.
            ///
            /// Checks: the slot holds a capability (`BadCap`) with grant
            /// (`Denied`); `rights` valid (`Invalid`) and no wider than the
            /// source's (`Denied`); the name's depth below
            /// [`CAP_NAME_DEPTH`](crate::CAP_NAME_DEPTH) and the derivation
            /// depth (`Invalid`); room in the list (`NoMemory`); all before
            /// anything changes. Changes: one slot of the caller's list.
            72 => cap_narrow(slot: CapSlot, component: Word, rights: Rights) -> [new_slot];

            /// Makes the environment named by `callee_slot`, which serves a
            /// transfer and owes no reply, owe it to the environment named
            /// by `caller_slot` under a fresh ticket, and returns the
            /// ticket. For a checkpointer restoring a synchronous transfer
            /// between two members of a tree (Fluke §4: a call in progress
            /// is part of the exported state): it imports the callee's
            /// serving state, binds the reply with this call, and sets the
            /// caller's registers to `pct_wait(callee, ticket)` — the
            /// restart point a waiting caller exports.
            ///
            /// Checks: write on both environments (`Denied`), both alive
            /// (`BadEnv`) and distinct (`Invalid`); the callee serving a
            /// transfer (`Invalid`) and owing no reply (`Busy`); the caller
            /// not waiting (`Busy`). Changes: the reply the callee owes.
            85 => pct_owe(callee_slot: EnvCap, caller_slot: EnvCap) -> [ticket];
            /// Changes the flags of every present page in `[va, va + pages
            /// pages)` of the environment named by `env_slot` to `flags`
            /// (Appel–Li's protN and unprotN in one entry; absent pages are
            /// skipped). A page that gains write needs, as for
            /// `page_protect`, a capability in `frame_slot` for its frame or
            /// for the environment that owns it; the first page refused
            /// stops the call with that error, every page before it changed
            /// (`va` and `pages` in the caller's registers say where it
            /// stopped). After 8 × `SysInfo::restart_records` pages (512
            /// by default) the kernel advances `va` and
            /// `pages` and returns to user mode with `rip` back on the
            /// `syscall` (Fluke's restart rule, as `page_batch`).
            ///
            /// Checks: write on the environment capability, and execute if
            /// `flags` leave the pages executable (`BadCap`, `Denied`);
            /// `va` page-aligned and the range inside user space, below the
            /// application area's page (`BadAddress`); no unknown bit in
            /// `flags` (`Invalid`); the capability for every page gaining write (`BadCap`,
            /// `Denied`). Changes: the entries of the range.
            90 => page_protect_range(env_slot: EnvCap, va: Word, pages: Len, flags: PageFlags, frame_slot: CapSlot) -> [];

            /// As `console_read`, but takes nothing: the bytes stay for the
            /// next `console_read`. A libOS that must not take another
            /// program's typing (a shell waiting for its foreground job)
            /// looks for a signal key this way.
            ///
            /// Checks: as `console_read` (`Invalid`, `BadAddress`,
            /// `Denied`). Changes: nothing.
            91 => console_peek(ptr: UserPtr, len: Len) -> [read];

            /// Gives the caller its application area: a zeroed kernel
            /// frame mapped writable at [`layout::APP_AREA`](crate::layout::APP_AREA),
            /// laid out as [`layout::AppArea`](crate::layout::AppArea), which the
            /// kernel reads (the critical-section flag, the repossession
            /// vector) and writes (the record of frames the abort protocol
            /// took). An environment has none until it asks: without one it
            /// has no critical sections and offers no frames first, and
            /// the abort protocol records what it takes only in the
            /// environment-table row's count. The page at `APP_AREA` is the
            /// kernel's: no page call maps, unmaps or shares it.
            ///
            /// Checks: the caller has no application area yet (`Exists`);
            /// its account and its ancestors have room for the frame and
            /// the page tables that map it (`NoMemory`, nothing changed
            /// but tables made, as for `page_map`). Changes: the
            /// application area and its mapping; the account (1 frame, and
            /// the tables in the row's `tables`).
            92 => app_area_make() -> [];

            /// `xn_write_from` for many blocks in one kernel entry (XCP's
            /// batches): `count` pairs of words at `pairs`, each a
            /// destination block and then its source, taken in order, each
            /// checked and submitted as `xn_write_from` checks and submits
            /// one. At most [`SysInfo::restart_records`](crate::layout::SysInfo)
            /// pairs go per call; the call stops early at a pair that cannot
            /// go now. Returns `[0, done, seq]`: the first `done` pairs
            /// (at least one) were submitted, the last of them as request
            /// `seq`; the caller calls again with the rest. Only when the
            /// first pair cannot go does the call say why, as
            /// `xn_write_from` would: its refusal (`[refusal, block,
            /// detail]`) or its error.
            ///
            /// Checks: `count` non-zero (`Invalid`); per pair as
            /// `xn_write_from`, the pair readable (`BadAddress`). Changes:
            /// per pair as `xn_write_from`.
            93 => xn_write_from_batch(pairs: UserPtr, count: Len) -> [refusal, done, seq];

            /// `xn_evict` for many blocks in one kernel entry: of the
            /// `count` block numbers (words) at `blocks`, up to
            /// [`SysInfo::restart_records`](crate::layout::SysInfo) in
            /// order, each that `xn_evict` would take out of the cache now
            /// leaves it; the others stay, skipped (a block not cached,
            /// not clean or durable, pinned by a copy, or still mapped).
            /// Returns `[0, looked, evicted]`: how many of the blocks it
            /// looked at (the caller calls again with the rest) and how
            /// many of those it evicted.
            ///
            /// Checks: `count` non-zero (`Invalid`); the first block
            /// readable (`BadAddress`; a later unreadable one ends the
            /// batch there). Changes: per evicted block as `xn_evict`.
            94 => xn_evict_batch(blocks: UserPtr, count: Len) -> [refusal, looked, evicted];

            /// `xn_write` for many blocks in one kernel entry (a file
            /// system's write-back): `count` block numbers (words) at
            /// `blocks`, taken in order, each checked and submitted as
            /// `xn_write` checks and submits one. At most
            /// [`SysInfo::restart_records`](crate::layout::SysInfo) blocks
            /// go per call; the call stops early at a block that cannot go
            /// now. Returns `[0, done, seq]`: the first `done` blocks (at
            /// least one) were submitted, the last of them as request
            /// `seq`; the caller calls again with the rest. Only when the
            /// first block cannot go does the call say why, as `xn_write`
            /// would: its refusal (`[refusal, block, detail]`) or its error.
            ///
            /// Checks: `count` non-zero (`Invalid`); per block as
            /// `xn_write`, its word readable (`BadAddress`). Changes: per
            /// block as `xn_write`.
            95 => xn_write_batch(blocks: UserPtr, count: Len) -> [refusal, done, seq];
        }
    };
}

/// `pct_reply`'s `caller` for "whoever this environment owes the reply".
pub const PCT_OWED: u64 = u64::MAX;

/// How deep `env_limit` may nest accounts below the root.
pub const ACCOUNT_MAX_DEPTH: u64 = 8;

/// `env_set_base`/`env_get_base`: the FS base.
pub const BASE_FS: u64 = 0;
/// `env_set_base`/`env_get_base`: the GS base.
pub const BASE_GS: u64 = 1;

/// The target word of `yield_cpu`, `pct_call` and `pct_send`: environment
/// `env` (an id) and `cap_slot`, the slot of the caller's capability for it
/// with [`rights::CALL`](crate::rights::CALL).
pub const fn call_target(env: u64, cap_slot: u64) -> u64 {
    (env & 0xffff_ffff) | (cap_slot << 32)
}

/// A capability slot that never holds a capability (for a target word when
/// the caller has none: the call then fails with `BadCap`).
pub const NO_CAP_SLOT: u64 = 0xffff_ffff;

/// How many derivations (`cap_derive`, `cap_grant`) a capability can be
/// below the first capability derived from.
pub const CAP_DERIVE_DEPTH: u64 = 7;

/// How many components a capability's name can have: `cap_narrow`
/// refuses to extend a name that has this many.
pub const CAP_NAME_DEPTH: u64 = 8;

/// Maximum bytes one `console_write` accepts.
pub const CONSOLE_WRITE_MAX: u64 = 64 * 1024;

macro_rules! define_call_enum {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rclass:ident)?),*];)*) => {
        /// Every Oxok call, by name. `Call::X as u64 + CALL_BASE` is its
        /// number.
        #[allow(non_camel_case_types, missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u64)]
        pub enum Call {
            $($name = $idx,)*
        }

        impl Call {
            /// All calls, in table order.
            pub const ALL: &'static [Call] = &[$(Call::$name,)*];

            /// The call with this number (`CALL_BASE + index`), if any.
            #[inline]
            pub fn from_number(nr: u64) -> Option<Call> {
                match nr.wrapping_sub($crate::CALL_BASE) {
                    $($idx => Some(Call::$name),)*
                    _ => None,
                }
            }

            /// The number user space puts in `rax`.
            pub const fn number(self) -> u64 {
                $crate::CALL_BASE + self as u64
            }

            /// The call's name as written in the table.
            pub const fn name(self) -> &'static str {
                match self { $(Call::$name => stringify!($name),)* }
            }

            /// Its doc comment in the table: the contract, what it checks
            /// and what it changes (read by [`crate::contract`]).
            pub const fn doc(self) -> &'static str {
                match self { $(Call::$name => concat!($($doc, "\n"),*),)* }
            }

            /// The names of its arguments, in register order.
            pub const fn arg_names(self) -> &'static [&'static str] {
                match self { $(Call::$name => &[$(stringify!($arg)),*],)* }
            }

            /// The classes of its arguments, in register order (see
            /// [`arg_class`](crate::arg_class)).
            pub const fn arg_classes(self) -> &'static [&'static str] {
                match self { $(Call::$name => &[$(stringify!($class)),*],)* }
            }

            /// The names of its results, in register order.
            pub const fn result_names(self) -> &'static [&'static str] {
                match self { $(Call::$name => &[$(stringify!($res)),*],)* }
            }

            /// The classes of its results, in order: `"Word"` for a plain
            /// result register, else the class written in the table
            /// (`Reply`).
            pub const fn result_classes(self) -> &'static [&'static str] {
                match self { $(Call::$name => &[$($crate::__result_class!($($rclass)?)),*],)* }
            }

            /// How many numbered argument registers (`rdi rsi rdx r10 r8
            /// r9`) the call reads; a `Msg` argument is the message
            /// registers and counts none.
            pub const fn args(self) -> usize {
                match self { $(Call::$name => 0usize $(+ $crate::__arg_regs!($class))*,)* }
            }

            /// How many result registers (`rdi rsi rdx`) the call fills when
            /// it completes; a `Reply` result counts none.
            #[inline]
            pub const fn results(self) -> usize {
                match self { $(Call::$name => $crate::__result_regs!($($res $(: $rclass)?),*),)* }
            }
        }
    };
}

for_each_call!(define_call_enum);
