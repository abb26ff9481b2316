//! `ioscope mpi` in a build without the `mpi` feature: one line on how to get it, exit 2.

use crate::common;
#[cfg(not(feature = "mpi"))]
use crate::common::*;

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_feature_mpi_says_in_one_line_how_to_build_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = ioscope()
        .args(["mpi", "write", dir.path().to_str().unwrap()])
        .output()
        .expect("run ioscope");
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.starts_with("error: mpi: "), "{line}");
    assert!(
        line.contains("cargo build --release --features mpi"),
        "{line}"
    );
    assert!(line.contains("OpenMPI"), "{line}");
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn report_renders_a_saved_mpi_result_in_any_build() {
    use ioscope::cmd::mpi::{Layout, Phases, Solo, execute};
    use ioscope::harness::{Harness, NoProgress};
    let dir = tempfile::tempdir().expect("temp dir");
    let options = ioscope::options::MpiOptions {
        dir: dir.path().to_path_buf(),
        phases: Phases::Both,
        layout: Layout::SharedStrided,
        size: 1 << 20,
        block_size: 256 << 10,
        runs: ioscope::measure::converge::Stopping::fixed(1),
        cache: ioscope::measure::cache::CacheState::Cold,
        seed: None,
        keep: false,
        reuse_files: false,
        existing: None,
        min_free: Some(0),
        json: true,
    };
    let report = execute(&options, &Solo, &Harness::system(&NoProgress))
        .expect("one rank runs")
        .expect("rank 0 has the report");
    let here = ioscope::report::json::Provenance::here(dir.path());
    let doc: serde_json::Value =
        serde_json::from_str(&ioscope::report::json::document("mpi", &report, &here))
            .expect("JSON");
    assert_eq!(doc["schema"], "ioscope/mpi/v2");
    let text = common::report_text(&doc);
    assert!(text.contains("mpi both in"), "{text}");
    assert!(text.contains("shared-strided"), "{text}");
    assert!(text.contains("verified"), "{text}");
    assert!(text.contains("aggregate MiB/s"), "{text}");
}
