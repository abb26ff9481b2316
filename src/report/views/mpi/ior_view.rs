//! `mpi`'s notes on what an IOR user compares: what each repeat's write started from, whose
//! data each rank read and why, files read back or kept, and a phase that failed after the
//! results above it were in.

use crate::results::mpi::MpiReport;
use crate::text::printable;
use crate::workload::layout::Phases;
use std::fmt::Write;

/// The notes under the tables.
pub(super) fn notes(out: &mut String, r: &MpiReport) {
    if r.phases_timed != Phases::Read {
        let _ = writeln!(out, "repeats: {}", r.repeat_files.sentence());
    }
    if let Some(o) = &r.reorder
        && r.phases_timed != Phases::Write
        && r.ranks > 1
    {
        let why = if o.wrapped {
            format!(
                "all {} ranks are on one host, where IOR's -C shift (a node's worth of ranks, {}) comes round to each rank's own data; the next rank's is read instead (the page cache is one here: cold reads are evicted and proven by residency, not by another node)",
                r.ranks, o.ranks_on_first_host
            )
        } else if o.packed {
            format!(
                "ranks are packed by host ({} on rank 0's), so the shift is a node's worth of ranks, as IOR's -C: each reads another host's data",
                o.ranks_on_first_host
            )
        } else {
            "ranks are placed round-robin across hosts, so the next rank is on another host, as IOR's -C reads it".to_string()
        };
        let _ = writeln!(
            out,
            "reordering: rank r reads rank r+{}'s data: {why}",
            o.shift
        );
    }
    if let Some(name) = &r.read_existing {
        let _ = writeln!(
            out,
            "read back: files named {} left by an earlier run (seed {}), not written by this one",
            printable(name),
            r.seed
        );
    }
    if let Some(k) = &r.kept {
        let files: Vec<String> = k.files.iter().map(|f| printable(f)).collect();
        let _ = writeln!(
            out,
            "kept: {} (seed {}); read them back with: mpirun -np {} ioscope mpi read {} --layout {} --size {} --block-size {} --existing {} --seed {}",
            files.join(", "),
            k.seed,
            r.ranks,
            printable(&r.dir),
            r.layout.name(),
            r.bytes_per_rank,
            r.block_size,
            printable(&k.name),
            k.seed
        );
    }
    if let Some(f) = &r.failed {
        let _ = writeln!(
            out,
            "FAILED: {} of repeat {}, the results above are those before it: {}",
            f.op.name(),
            f.repeat,
            f.errors.join("; ")
        );
    }
}
