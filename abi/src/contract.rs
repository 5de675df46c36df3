//! Which errors a call's contract allows, read from the call table itself,
//! so the kernel's behaviour can be checked against its documentation (the
//! fuzzer, `apps/tests/src/fuzz`, fails on an error a call returned that its
//! contract does not allow).
//!
//! A call may return an error when any of these holds:
//! - its doc comment names it (`` `Denied` `` or `Error::Denied`);
//! - its doc comment says it checks "as `other`" another call, and that
//!   call's contract allows it (followed [`MAX_REFERENCE_DEPTH`] deep);
//! - one of its arguments is of a class that allows it ([`arg_errors`],
//!   from [`arg_class`](crate::arg_class)).

use crate::{Call, Error};

/// How many "as `other`" references are followed.
pub const MAX_REFERENCE_DEPTH: usize = 3;

/// The errors any call may return because of an argument of class
/// `class`, whatever its doc comment says (the dispatch decodes every
/// argument by its class: see [`arg_class`](crate::arg_class)).
pub fn arg_errors(class: &str) -> &'static [Error] {
    crate::arg_class::by_name(class).map_or(&[], |c| c.errors)
}

/// Whether `doc` names the word `word` (not as part of a longer word).
pub fn names(doc: &str, word: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    doc.match_indices(word)
        .any(|(at, _)| !part(doc[..at].chars().next_back()) && !part(doc[at + word.len()..].chars().next()))
}

/// The calls `doc` refers to as "as `name`" (any white space, line breaks
/// included, between the two words).
pub fn references(doc: &str) -> impl Iterator<Item = Call> + '_ {
    doc.match_indices("as").filter_map(|(at, _)| {
        if doc[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let rest = doc[at + 2..].trim_start();
        let rest = rest.strip_prefix('`')?;
        let name = &rest[..rest.find('`')?];
        Call::ALL.iter().copied().find(|c| c.name() == name)
    })
}

/// Whether the contract of `call` allows it to return `error`.
pub fn allows(call: Call, error: Error) -> bool {
    allows_within(call, error, MAX_REFERENCE_DEPTH)
}

fn allows_within(call: Call, error: Error, depth: usize) -> bool {
    let doc = call.doc();
    names(doc, error.name())
        || call.arg_classes().iter().any(|a| arg_errors(a).contains(&error))
        || (depth > 0 && references(doc).any(|c| c != call && allows_within(c, error, depth - 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_errors_are_allowed() {
        assert!(allows(Call::page_map, Error::Exists));
        assert!(!allows(Call::null, Error::Denied));
        assert!(!allows(Call::env_self, Error::BadCap));
    }

    #[test]
    fn names_match_whole_words_only() {
        assert!(names("fails (`Busy`)", "Busy"));
        assert!(names("Error::Busy.", "Busy"));
        assert!(!names("`Busyness`", "Busy"));
        assert!(!names("`NotBusy`", "Busy"));
    }

    #[test]
    fn references_are_followed() {
        assert!(references(Call::pct_send.doc()).any(|c| c == Call::pct_call));
        assert!(allows(Call::pct_send, Error::Busy));
        assert!(references("a map as\n `page_map`, has `null`").eq([Call::page_map]));
        assert!(allows(Call::page_batch, Error::Exists));
    }

    #[test]
    fn slot_arguments_allow_the_decoding_errors() {
        assert!(allows(Call::env_destroy, Error::BadCap));
        assert!(allows(Call::env_destroy, Error::BadEnv));
        assert!(arg_errors("Word").is_empty());
        assert!(arg_errors("EnvCap").contains(&Error::BadEnv));
    }

    #[test]
    fn every_error_a_contract_names_exists() {
        // Each `Name` in backticks that looks like an error (CamelCase, one
        // of the shapes below) must be a real error, or the contract names
        // an error that cannot be returned.
        for call in Call::ALL {
            for (at, _) in call.doc().match_indices('`') {
                let rest = &call.doc()[at + 1..];
                let Some(end) = rest.find('`') else { continue };
                let word = &rest[..end];
                let camel = word.len() > 2
                    && word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                    && word.chars().all(|c| c.is_ascii_alphanumeric())
                    && word.chars().skip(1).any(|c| c.is_ascii_lowercase());
                let error_like = ["Bad", "No", "Denied", "Invalid", "Busy", "Exists", "Would", "Not"]
                    .iter()
                    .any(|p| word.starts_with(p));
                if camel && error_like {
                    assert!(
                        Error::ALL.iter().any(|e| e.name() == word),
                        "{}: the contract names `{word}`, which is no error",
                        call.name()
                    );
                }
            }
        }
    }
}
