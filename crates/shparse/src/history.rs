//! The line editor's history: the last few entered lines.

use alloc::collections::VecDeque;
use alloc::string::String;

/// A bounded list of lines, oldest first. Empty lines and a repeat of the
/// newest line are not recorded; the oldest line goes when it is full.
#[derive(Clone, Debug, Default)]
pub struct History {
    lines: VecDeque<String>,
    capacity: usize,
}

impl History {
    /// An empty history keeping at most `capacity` lines (0 keeps none).
    pub fn new(capacity: usize) -> History {
        History { lines: VecDeque::new(), capacity }
    }

    /// Records `line`, unless it is empty or equal to the newest line.
    pub fn push(&mut self, line: &str) {
        if self.capacity == 0 || line.is_empty() || self.lines.back().is_some_and(|l| l == line) {
            return;
        }
        if self.lines.len() == self.capacity {
            self.lines.pop_front();
        }
        self.lines.push_back(String::from(line));
    }

    /// Number of lines held.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether no line is held.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The line `back` steps before the newest (0 is the newest).
    pub fn recent(&self, back: usize) -> Option<&str> {
        let i = self.lines.len().checked_sub(back.checked_add(1)?)?;
        self.lines.get(i).map(String::as_str)
    }

    /// The lines, oldest first (for a `history` command).
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(String::as_str)
    }

    /// Forgets every line.
    pub fn clear(&mut self) {
        self.lines.clear();
    }
}
