//! Helpers shared by the scenario programs: each program prints
//! `NAME: ok` when every check held, or `NAME: FAIL …` lines.
#![no_std]
#![deny(unsafe_code)]

use oxok_libos::println;

/// Counts checks for one program.
pub struct Checks {
    name: &'static str,
    failed: u32,
    passed: u32,
}

impl Checks {
    /// A fresh counter for program `name`.
    pub fn new(name: &'static str) -> Checks {
        Checks { name, failed: 0, passed: 0 }
    }

    /// Records one check; prints a FAIL line when it does not hold.
    pub fn check(&mut self, cond: bool, what: &str) {
        if cond {
            self.passed += 1;
        } else {
            self.failed += 1;
            println!("{}: FAIL {}", self.name, what);
        }
    }

    /// Prints the verdict; returns the exit status.
    pub fn finish(&self) -> i32 {
        if self.failed == 0 {
            println!("{}: ok ({} checks)", self.name, self.passed);
            0
        } else {
            println!("{}: FAIL {} of {} checks", self.name, self.failed, self.failed + self.passed);
            1
        }
    }
}
