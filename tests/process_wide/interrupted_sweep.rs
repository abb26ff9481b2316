//! Interruption on the `null` engine: in tests/process_wide, one test at a time, because the
//! Ctrl-C flag is process-wide and would stop the other harness tests running beside it.

use crate::common::*;
use ioscope::harness::{Harness, NoProgress};
use ioscope::warning::Warning;

#[test]
fn an_interrupted_sweep_keeps_the_points_measured_before_it() {
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let options = sweep_options(&[
        path.to_str().unwrap(),
        "--engine",
        "null",
        "--block-sizes",
        "4k,64k,1m",
    ]);
    let harness = Harness {
        meter: &FIXED_METER,
        progress: &NoProgress,
    };
    let mut saved = Vec::new();
    let r = ioscope::cmd::sweep::execute(&options, &harness, &mut |partial| {
        saved.push(partial.points.len());
        // Ctrl-C arrives after the first point is saved.
        ioscope::interrupt::request();
        Ok(())
    });
    ioscope::interrupt::reset();
    let r = r.expect("an interruption after a point is a partial result, not an error");
    assert!(!r.complete);
    assert_eq!(r.points.len(), 1, "the point measured before Ctrl-C");
    assert!(r.warnings.contains(&Warning::Partial));
    assert_eq!(
        saved,
        [1, 1],
        "saved after the point, and once more at the end"
    );
}
