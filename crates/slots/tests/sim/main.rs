//! Simulated-machine tests of the slot policy: CPU shares follow slot
//! ownership, hostile environments are charged and destroyed while the
//! others keep their share, critical sections are bounded, spare time goes
//! only to those who asked.

mod fuzz;
mod hostile;
mod protocol;
mod shares;
mod spare;
mod table;
mod world;
