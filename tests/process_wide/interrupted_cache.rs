//! An interrupted `cache` keeps the rows measured before Ctrl-C: in tests/process_wide, one
//! test at a time, because the Ctrl-C flag is process-wide and would stop other tests
//! running beside it.

use crate::common::*;
use ioscope::cli::Command;
use ioscope::harness::{Harness, NoProgress};
use ioscope::measure::meter::FixedMeter;
use ioscope::options::CacheOptions;
use ioscope::report::view::Exportable;
use ioscope::warning::Warning;

const METER: FixedMeter = FixedMeter {
    resident: None,
    ..FIXED_METER
};

#[test]
fn an_interrupted_cache_run_keeps_the_rows_measured_before_it() {
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let argv = [
        "cache",
        path.to_str().unwrap(),
        "--engine",
        "null",
        "--block-size",
        "4k,64k,1m",
    ];
    let options = match command_of(&argv) {
        Command::Cache(a) => CacheOptions::from_args(&a).expect("valid options"),
        _ => unreachable!("a cache command line"),
    };
    let harness = Harness {
        meter: &METER,
        progress: &NoProgress,
    };
    let mut saved = Vec::new();
    let r = ioscope::cmd::coldwarm::execute(&options, &harness, &mut |partial| {
        saved.push(partial.rows.len());
        // Ctrl-C arrives after the first row is saved.
        ioscope::interrupt::request();
        Ok(())
    });
    ioscope::interrupt::reset();
    let r = r.expect("an interruption after a row is a partial result, not an error");
    assert_eq!(r.rows.len(), 1, "the row measured before Ctrl-C");
    assert!(!r.complete(), "exit 130");
    assert!(r.warnings.contains(&Warning::Partial));
    assert_eq!(saved.first(), Some(&1), "saved after the row");
}
