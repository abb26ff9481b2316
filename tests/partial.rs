//! Interruption on the `null` engine: in a test binary of its own, because the Ctrl-C flag
//! is process-wide and would stop the other harness tests running beside it.

mod common;
use clap::Parser;
use common::*;
use ioscope::cli::{Cli, Command};
use ioscope::cmd::harness::{Harness, NoProgress};
use ioscope::cmd::warning::Warning;
use ioscope::measure::meter::FixedMeter;
use ioscope::options::SweepOptions;

const METER: FixedMeter = FixedMeter {
    seconds_per_call: 1e-6,
    bytes_per_second: 1e9,
    fsync_seconds: 0.0,
    resident: Some(1.0),
};

fn sweep_options(args: &[&str]) -> SweepOptions {
    let mut argv = vec!["ioscope", "sweep"];
    argv.extend_from_slice(args);
    match Cli::try_parse_from(argv).expect("valid arguments").command {
        Command::Sweep(a) => SweepOptions::from_args(&a).expect("valid options"),
        _ => unreachable!("a sweep command line"),
    }
}

#[test]
fn an_interrupted_sweep_keeps_the_points_measured_before_it() {
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
        meter: &METER,
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
