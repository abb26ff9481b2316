//! The real [`Comm`]: MPI's world communicator through rsmpi (the `mpi` cargo feature,
//! against the system's OpenMPI). MPI is initialised when the world is made and finalised
//! when it is dropped.

use super::mpi::Comm;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

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
