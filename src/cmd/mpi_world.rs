//! The real [`Comm`]: MPI's world communicator through rsmpi (the `mpi` cargo feature,
//! against the system's OpenMPI). MPI is initialised when the world is made and finalised
//! when it is dropped.

use super::mpi::Comm;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// MPI's error handler for the world: instead of MPI's default abort (which ends the
/// process where it stands, leaving this rank's scratch files), the files are removed and
/// the process ends with one line naming the rank ([`super::mpi::abandon_after_mpi_error`]).
/// A peer killed with SIGKILL shows up here when the ranks talk over a network.
fn on_error_abandon(world: &SimpleCommunicator) {
    // Declared as MPI's handler type without its trailing `...`: Rust cannot define a
    // variadic function, and MPI passes only these two arguments (the variadic part is
    // empty), both in registers, so the callee reads them the same way.
    unsafe extern "C" fn handler(_comm: *mut ffi::MPI_Comm, code: *mut std::os::raw::c_int) {
        // SAFETY: MPI passes a pointer to the error code (null checked anyway).
        let code = if code.is_null() { 0 } else { unsafe { *code } };
        let mut text = [0 as std::os::raw::c_char; ffi::MPI_MAX_ERROR_STRING as usize + 1];
        let mut len: std::os::raw::c_int = 0;
        // SAFETY: the buffer holds MPI_MAX_ERROR_STRING characters, as MPI_Error_string
        // requires; it writes at most that many and sets len.
        unsafe { ffi::MPI_Error_string(code, text.as_mut_ptr(), &mut len) };
        let len = usize::try_from(len).unwrap_or(0).min(text.len());
        let bytes: Vec<u8> = text[..len].iter().map(|&c| c as u8).collect();
        super::mpi::abandon_after_mpi_error(&String::from_utf8_lossy(&bytes));
    }
    type Plain = unsafe extern "C" fn(*mut ffi::MPI_Comm, *mut std::os::raw::c_int);
    // SAFETY: a function pointer to one of the same size; see the handler's comment for why
    // calling it through MPI's variadic type reads the same two arguments.
    let function: ffi::MPI_Comm_errhandler_function = Some(unsafe {
        std::mem::transmute::<
            Plain,
            unsafe extern "C" fn(*mut ffi::MPI_Comm, *mut std::os::raw::c_int, ...),
        >(handler as Plain)
    });
    // SAFETY: MPI is initialised; the handle is written by MPI_Comm_create_errhandler before
    // it is set on the world, whose raw handle is valid while `world` lives.
    unsafe {
        let mut errhandler: ffi::MPI_Errhandler = std::mem::zeroed();
        if ffi::MPI_Comm_create_errhandler(function, &mut errhandler) == 0 {
            ffi::MPI_Comm_set_errhandler(world.as_raw(), errhandler);
        }
    }
}

/// MPI's world: every rank of the job.
pub struct World {
    // Finalises MPI when dropped; the communicator is only used before that.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    launched: bool,
}

impl World {
    /// Initialises MPI (a singleton job of one rank when not started by `mpirun`);
    /// `None` when MPI was initialised already.
    pub fn init() -> Option<Self> {
        // Set by OpenMPI's launcher, by PMIx and by PMI (MPICH, Slurm's srun); asked
        // before MPI_Init: a singleton sets some of these variables itself.
        let launched = ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"]
            .iter()
            .any(|v| std::env::var_os(v).is_some());
        let universe = mpi::initialize()?;
        let world = universe.world();
        on_error_abandon(&world);
        Some(Self {
            _universe: universe,
            world,
            launched,
        })
    }
}

impl Comm for World {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn barrier(&self) {
        self.world.barrier();
    }

    fn broadcast(&self, value: u64) -> u64 {
        let mut v = value;
        self.world.process_at_rank(0).broadcast_into(&mut v);
        v
    }

    fn all_true(&self, value: bool) -> bool {
        let mut all = 0i32;
        self.world
            .all_reduce_into(&i32::from(value), &mut all, SystemOperation::min());
        all == 1
    }

    fn sum(&self, value: u64) -> u64 {
        let mut total = 0u64;
        self.world
            .all_reduce_into(&value, &mut total, SystemOperation::sum());
        total
    }

    fn max(&self, value: f64) -> f64 {
        let mut most = 0f64;
        self.world
            .all_reduce_into(&value, &mut most, SystemOperation::max());
        most
    }

    fn gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        // Every message leads with one byte: OpenMPI refuses (MPI_ERR_ARG) the dangling
        // pointer of an empty slice as a send buffer, and a rank with no error sends none.
        let framed: Vec<u8> = std::iter::once(1).chain(bytes.iter().copied()).collect();
        let bytes = &framed[..];
        let root = self.world.process_at_rank(0);
        let len = i32::try_from(bytes.len()).expect("a rank's result is far below 2 GiB");
        if self.world.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(bytes);
            return Vec::new();
        }
        let mut counts = vec![0i32; self.size()];
        root.gather_into_root(&len, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |at, &n| {
                let here = *at;
                *at += n;
                Some(here)
            })
            .collect();
        let total: i32 = counts.iter().sum();
        let mut buf = vec![0u8; total as usize];
        {
            let mut partition = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut partition);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&n, &at)| buf[at as usize + 1..(at + n) as usize].to_vec())
            .collect()
    }

    fn launched(&self) -> bool {
        self.launched
    }
}
