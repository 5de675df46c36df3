//! The end of a time slice: the kernel's slot-end upcall, the one moment
//! the personality runs while the program runs its own code without
//! calls. It gives the CPU back as the kernel asks (`yield_cpu`), and when
//! it gets it again and the program was interrupted in its own code, it
//! switches to another thread that can run ([`threads::preempt`]) and
//! delivers what is pending for the running thread — an alarm that fell
//! due, a signal another process sent — as a call's return would. So a
//! program spinning without calls gets `SIGALRM` or a handled `SIGINT`
//! within a slice of the event, and a spinning thread does not keep the
//! others from running. Interrupted in the personality itself (a call in
//! progress), it only yields: the call's return delivers.

use crate::{groups, signals, threads, timers};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::sys;
use oxok_libos::upcall::{self, Kind, Outcome};

/// Registers the slot-end handler (after `upcall::install`).
pub fn install() -> Result<(), oxok_libos::Error> {
    upcall::set_handler(Kind::SlotEnd, on_slot_end);
    upcall::install_slot_handlers()
}

fn on_slot_end(frame: &mut ExceptionFrame) -> Outcome {
    let _ = sys::yield_cpu(0);
    if crate::in_program(frame) {
        threads::preempt(frame);
        timers::poll();
        groups::forward_pending();
        // Not a call's return: nothing to restart (the number is unused).
        signals::deliver_pending(frame, u64::MAX, false);
    }
    Outcome::Resume
}
