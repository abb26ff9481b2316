//! `ioscope trace -- CMD`: its answer last at 80 columns, the traced command and its
//! signals, every call counted, clock reads and timed regions, descriptors and the 32-bit
//! ABI, the kernel engine beside ptrace, and each tool's printed figures (fio, iozone, dd,
//! bonnie++) checked against the calls. One test binary, a module per file; a test that
//! needs a compiler, a tool, ptrace or the kernel engine skips with the reason.

#[path = "../common/mod.rs"]
mod common;

mod answer;
mod bonnie;
mod claims;
mod clock;
mod command;
mod count;
mod descriptors_abi;
mod kernel;
mod tasks;
mod tool_figures;
