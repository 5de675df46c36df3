//! The call table as the fuzzer sees it: every call with the names of its
//! arguments, generated from `oxok_abi::for_each_call!`, so a call added to
//! `abi/src/calls.rs` is fuzzed without touching this code. Argument names
//! choose the hostile values ([`kind_of`]).

use oxok_libos::abi::Call;

macro_rules! call_table {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rclass:ident)?),*];)*) => {
        /// Every call in table order, with its argument names.
        pub const TABLE: &[(Call, &[&str])] = &[$((Call::$name, &[$(stringify!($arg)),*]),)*];
    };
}

oxok_libos::abi::for_each_call!(call_table);

/// What an argument names, judged by its name in the call table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A capability slot naming an environment (`env_slot`).
    EnvSlot,
    /// A capability slot of any kind (`slot`, `frame_slot`, `slot_cap`…).
    CapSlot,
    /// A user buffer the kernel reads or writes (`ptr`, `buf`, `entries`…).
    Ptr,
    /// A page address in some address space, or a code address (`va`, `entry`).
    Va,
    /// A length or a record count (`len`, `count`).
    Len,
    /// A physical frame number (`pfn`).
    Pfn,
    /// A raw environment id (`caller`, `callee`).
    EnvId,
    /// A transfer target word: an id and the slot of a capability with
    /// call (`target`, see `call_target`).
    Target,
    /// A small selector or bit set (`kind`, `index`, `flags`, `rights`…).
    Small,
    /// A quantity (`frames`, `envs`, `deadline`, `value`).
    Amount,
    /// Anything else (an argument name this table does not know yet).
    Any,
}

/// The kind of argument `name`.
pub fn kind_of(name: &str) -> Kind {
    match name {
        "env_slot" => Kind::EnvSlot,
        "slot" | "frame_slot" | "slot_cap" | "cap_slot" => Kind::CapSlot,
        "ptr" | "buf" | "code" | "entries" => Kind::Ptr,
        "va" | "entry" => Kind::Va,
        "len" | "count" => Kind::Len,
        "pfn" => Kind::Pfn,
        "target" => Kind::Target,
        "caller" | "callee" => Kind::EnvId,
        "rights" | "flags" | "kind" | "index" | "param" | "mask" | "placement" | "arg" | "on" | "which" => Kind::Small,
        "frames" | "envs" | "deadline" | "value" | "slots" | "ticket" => Kind::Amount,
        n if n.ends_with("_slot") || n.ends_with("_cap") => Kind::CapSlot,
        n if n.ends_with("ptr") || n.ends_with("buf") => Kind::Ptr,
        n if n.ends_with("_va") || n.ends_with("addr") => Kind::Va,
        n if n.ends_with("len") => Kind::Len,
        n if n.ends_with("env") || n.ends_with("_id") => Kind::EnvId,
        _ => Kind::Any,
    }
}
