//! Verification in place by `mpi` on 2 ranks under mpirun (feature `mpi`): two blocks that
//! traded places, a block shifted by one byte and one changed byte, made by the
//! `IOSCOPE_CORRUPT` hook, are each caught with the exact first bad byte and the rank that
//! wrote it. `run` and `patterns` catch the same in tests/classic/verify_inplace.rs.

use crate::common::*;

#[test]
fn mpi_on_two_ranks_catches_each_corruption_with_its_offset() {
    let block = 1 << 20;
    for kind in KINDS {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().unwrap();
        let args = [
            "both",
            d,
            "--size",
            "4m",
            "--block-size",
            "1m",
            "--repeat",
            "1",
            "--seed",
            "3",
            "--min-free",
            "0",
        ];
        let Some(out) = mpirun(2, &args, &[("IOSCOPE_CORRUPT", kind)]) else {
            return;
        };
        assert_eq!(
            out.status.code(),
            Some(1),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Rank 0 reads rank 1's file, written with rank 1's seed, from byte 0.
        let seed =
            ioscope::cmd::mpi::data_seed(ioscope::workload::layout::Layout::FilePerRank, 3, 1);
        let expected = first_changed(kind, 0, block, stream_byte(seed));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("byte {expected} is not the byte written there")),
            "{kind}: {stderr}"
        );
        assert!(stderr.contains("written by rank 1"), "{kind}: {stderr}");
    }
}
