//! Parameter expansion: from a tree of [`Word`]s to a tree of `String`s.
//!
//! Expansion is a separate step from parsing so that the shell can expand
//! each pipeline right before it runs it: in `false; echo $?` or
//! `X=1; echo $X` the second command must see what the first one did.
//! [`expand`] (the whole line at once) is only right when nothing in the
//! line changes variables or `$?`.
//!
//! The rules are in the crate documentation, under "Expansion".

use alloc::string::String;
use alloc::vec::Vec;

use crate::ast::{AndOr, Command, Item, List, Part, Pipeline, Redirect, Simple, Target, Word};
use crate::error::ExpandError;

impl Word {
    /// The word's text with parameters replaced by their values.
    pub fn expand<F, S>(&self, mut lookup: F) -> String
    where
        F: FnMut(&str) -> Option<S>,
        S: AsRef<str>,
    {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => out.push_str(text),
                Part::Var { name, .. } => {
                    if let Some(value) = lookup(name) {
                        out.push_str(value.as_ref());
                    }
                }
            }
        }
        out
    }

    /// As an argument: like [`Word::expand`], but `None` (drop it) when the
    /// result is empty and the word had no quoting.
    pub fn expand_arg<F, S>(&self, lookup: F) -> Option<String>
    where
        F: FnMut(&str) -> Option<S>,
        S: AsRef<str>,
    {
        let text = self.expand(lookup);
        if text.is_empty() && !self.quoted { None } else { Some(text) }
    }
}

impl Simple<Word> {
    /// Expands assignments, then arguments, then redirection targets.
    /// Assignment values see the variables as they were before the command
    /// (`X=1 cmd $X` passes the old `X`).
    pub fn expand<F, S>(&self, mut lookup: F) -> Result<Simple, ExpandError>
    where
        F: FnMut(&str) -> Option<S>,
        S: AsRef<str>,
    {
        let assignments = self.assignments.iter().map(|(n, v)| (n.clone(), v.expand(&mut lookup))).collect();
        let argv = self.argv.iter().filter_map(|w| w.expand_arg(&mut lookup)).collect();
        let mut redirects = Vec::with_capacity(self.redirects.len());
        for r in &self.redirects {
            let mut file =
                |w: &Word| w.expand_arg(&mut lookup).ok_or(ExpandError::AmbiguousRedirect { pos: w.span.start });
            let target = match &r.target {
                Target::Read(w) => Target::Read(file(w)?),
                Target::Write(w) => Target::Write(file(w)?),
                Target::Append(w) => Target::Append(file(w)?),
                Target::Dup(n) => Target::Dup(*n),
            };
            redirects.push(Redirect { fd: r.fd, target });
        }
        Ok(Simple { assignments, argv, redirects })
    }
}

impl Pipeline<Word> {
    /// Expands every stage (all stages start together, so they see the
    /// same variables).
    pub fn expand<F, S>(&self, mut lookup: F) -> Result<Pipeline, ExpandError>
    where
        F: FnMut(&str) -> Option<S>,
        S: AsRef<str>,
    {
        let commands = self.commands.iter().map(|c| c.expand(&mut lookup)).collect::<Result<_, _>>()?;
        Ok(Pipeline { commands })
    }
}

impl AndOr<Word> {
    /// Expands every pipeline. Prefer [`Pipeline::expand`] on each one as
    /// it runs: `a && echo $?` needs `a`'s status.
    pub fn expand<F, S>(&self, mut lookup: F) -> Result<AndOr, ExpandError>
    where
        F: FnMut(&str) -> Option<S>,
        S: AsRef<str>,
    {
        let first = self.first.expand(&mut lookup)?;
        let rest = self.rest.iter().map(|(c, p)| Ok((*c, p.expand(&mut lookup)?))).collect::<Result<_, _>>()?;
        Ok(AndOr { first, rest })
    }
}

impl List<Word> {
    /// Expands the whole line with one lookup; see [`expand`].
    pub fn expand<F, S>(&self, mut lookup: F) -> Result<List, ExpandError>
    where
        F: FnMut(&str) -> Option<S>,
        S: AsRef<str>,
    {
        let items = self
            .items
            .iter()
            .map(|it| Ok(Item { and_or: it.and_or.expand(&mut lookup)?, background: it.background }))
            .collect::<Result<_, _>>()?;
        Ok(List { items })
    }
}

/// Expands a whole parsed line at once with `lookup`.
///
/// Every `$X` sees the same values, so this is right only when nothing in
/// the line changes them; a shell should instead walk the tree and call
/// [`Pipeline::expand`] just before running each pipeline.
pub fn expand<F, S>(cmd: &Command, lookup: F) -> Result<List, ExpandError>
where
    F: FnMut(&str) -> Option<S>,
    S: AsRef<str>,
{
    cmd.expand(lookup)
}
