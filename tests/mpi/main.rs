//! `ioscope mpi`: one rank without MPI (`Solo`) and the IO500-like preset in any build, the
//! one line a build without the feature prints, and, with `--features mpi`, 2 and 4 ranks
//! under `mpirun`: layouts, IOR's figures, io500 and verification in place.
//!
//! A binary apart: CI builds and runs it a second time with `--features mpi` (`cargo test
//! --release --features mpi --test mpi`), where its `mpirun` modules exist; the other
//! binaries need not be built twice for it.

#[path = "../common/mod.rs"]
mod common;

mod io500;
mod ior;
mod ranks;
mod solo;
#[cfg(feature = "mpi")]
mod verify_inplace;
mod without_feature;
