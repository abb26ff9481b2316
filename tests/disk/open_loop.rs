//! `disk --rate`: the open loop checked where the answer is known. On a simulated device of
//! fixed service time (the `IOSCOPE_SIMULATE_DEVICE` test hook) the mean response time at
//! half load matches queueing theory (M/D/1); a rate the device cannot carry is said not to
//! be held, with its backlog; a stall (the process stopped 300 ms) lands in the open loop's
//! p99 at its true weight and only in a closed loop's max; the search under a latency target
//! ends between the rates that hold and fail it; and bad values are one-line errors. The
//! figures asserted are the simulated device's, not this machine's speed; where the machine
//! is too busy to keep the schedule (the generator's own lag is measured), the theory test
//! skips with the reason.

use crate::common::{ioscope, json_of, usage_error};
use serde_json::Value;

/// The JSON document of `disk DIR --size 4m ARGS` on a simulated device of `servers`
/// servers taking `service` each.
fn simulated(dir: &std::path::Path, device: &str, args: &[&str]) -> Value {
    let out = ioscope()
        .arg("disk")
        .arg(dir)
        .args(["--size", "4m", "--seed", "5", "--json"])
        .args(args)
        .env("IOSCOPE_SIMULATE_DEVICE", device)
        .output()
        .expect("run ioscope");
    assert!(
        out.status.success(),
        "ioscope disk {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

#[test]
fn the_mean_response_at_half_load_matches_m_d_1() {
    // One server of 500 µs, Poisson arrivals at 1,000/s: ρ = 0.5, and Pollaczek–Khinchine
    // gives a mean response of D + ρD / (2(1 − ρ)) = 1.5 D = 750 µs.
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = simulated(
        dir.path(),
        "1:500us",
        &["--rate", "1000", "--arrivals", "poisson", "--runtime", "6s"],
    );
    let row = &doc["steps"][0]["row"];
    let open = &row["open"];
    let lag_p99 = f(&open["lag_us"]["p99"]);
    if lag_p99 > 50.0 {
        eprintln!(
            "skipped: the machine was too busy to keep the schedule (issue lag p99 {lag_p99} µs against a service time of 500 µs)"
        );
        return;
    }
    let mean = f(&open["response_us"]["mean"]);
    assert!(
        (mean / 750.0 - 1.0).abs() < 0.05,
        "mean response {mean} µs against 750 µs (M/D/1, ρ = 0.5): {open}"
    );
    // With every slot free the I/Os wait only in the device: service ≈ response.
    let service = f(&row["latency_us"]["mean"]);
    assert!(
        (service / mean - 1.0).abs() < 0.05,
        "{service} against {mean}"
    );
    assert!(
        (f(&open["achieved_iops"]) / 1000.0 - 1.0).abs() < 0.05,
        "{open}"
    );
    assert_eq!(open["unissued"].as_u64(), Some(0), "{open}");
}

#[test]
fn a_rate_beyond_the_device_is_said_not_held_with_its_backlog() {
    // One server of 1 ms carries 1,000 I/Os per second; 2,000 are asked.
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = simulated(
        dir.path(),
        "1:1ms",
        &["--rate", "2000", "--depth", "4", "--runtime", "1s"],
    );
    let open = &doc["steps"][0]["row"]["open"];
    let achieved = f(&open["achieved_iops"]);
    // What completed by the deadline: never more than the device can do.
    assert!(achieved <= 1050.0, "{open}");
    assert!(open["unissued"].as_u64().unwrap() > 0, "{open}");
    assert!(f(&open["backlog_change_per_second"]) > 100.0, "{open}");
    assert!(f(&open["capped_seconds"]) > 0.5, "{open}");
    assert_eq!(open["cap"].as_u64(), Some(4));
    let text = crate::common::report_text(&doc);
    let held = text
        .lines()
        .find(|l| l.starts_with("held"))
        .unwrap_or_else(|| panic!("a held line: {text}"));
    assert!(held.contains("not held from 2,000 IOPS"), "{held}");
    assert!(held.contains("the backlog grew"), "{held}");
    assert!(held.contains("the cap held them back"), "{held}");
}

/// Runs `disk` on a simulated device, stopping the process for 300 ms two seconds in.
fn stalled(dir: &std::path::Path, args: &[&str]) -> Value {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .arg("disk")
        .arg(dir)
        .args(["--size", "4m", "--seed", "5", "--json", "--runtime", "5s"])
        .args(args)
        .env("IOSCOPE_SIMULATE_DEVICE", "1:100us")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start ioscope");
    std::thread::sleep(std::time::Duration::from_secs(2));
    let pid = child.id() as i32;
    // SAFETY: signals to the child we started and still own.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let out = child.wait_with_output().expect("wait for ioscope");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn a_stall_lands_in_the_open_loops_p99_and_only_in_a_closed_loops_max() {
    let dir = tempfile::tempdir_in(".").unwrap();
    // 2,000 arrivals a second for 5 s, 600 of them in the 300 ms stopped: 6% of the I/Os
    // wait 0–300 ms, so the p99 is about 250 ms.
    let open = stalled(dir.path(), &["--rate", "2000"]);
    let o = &open["steps"][0]["row"]["open"];
    let p99 = f(&o["response_us"]["p99"]);
    assert!(
        p99 > 100_000.0,
        "the open loop's p99 carries the stall: {o}"
    );
    // One I/O in flight at a time: the stall is one I/O's, out of tens of thousands.
    let closed = stalled(
        dir.path(),
        &["--rw", "randread", "--depth", "1", "--repeat", "1"],
    );
    let l = &closed["rows"][0]["latency_us"];
    assert!(f(&l["p99"]) < 10_000.0, "a closed loop's p99 hides it: {l}");
    assert!(f(&l["max"]) > 250_000.0, "only its max shows it: {l}");
}

#[test]
fn the_search_ends_between_the_highest_rate_that_holds_and_the_lowest_that_fails() {
    // One server of 1 ms, uniform arrivals: every rate up to 1,000/s is served in about
    // 1 ms, none above it is held.
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = simulated(
        dir.path(),
        "1:1ms",
        &[
            "--rate",
            "500,2000",
            "--latency-target",
            "20ms:p99",
            "--depth",
            "8",
            "--runtime",
            "1s",
        ],
    );
    let s = &doc["search"];
    let (lo, hi) = (f(&s["holds_up_to"]), f(&s["fails_at"]));
    // The bisection runs 1,250 (fails), 875 (holds), 1,063 (fails: 1,000 at most is
    // 94%), 969; a busy machine may make the rates near 1,000 miss, never one above it hold.
    assert!((750.0..=1000.0).contains(&lo), "{s}");
    assert!((lo..=1250.0).contains(&hi) && hi > lo, "{s}");
    assert_eq!(s["steps"].as_array().unwrap().len(), 4, "{s}");
    let text = crate::common::report_text(&doc);
    let target = text.lines().find(|l| l.starts_with("target")).unwrap();
    assert!(target.contains("p99 < 20.0 ms holds up to"), "{target}");
    assert!(target.contains("beyond it (at"), "{target}");
}

#[test]
fn percents_are_of_a_closed_loop_peak_run_first() {
    let dir = tempfile::tempdir_in(".").unwrap();
    // Two servers of 1 ms: the peak is 2,000 I/Os per second.
    let doc = simulated(
        dir.path(),
        "2:1ms",
        &["--rate", "25%,50%", "--depth", "16", "--runtime", "0.5s"],
    );
    let peak = f(&doc["peak"]["iops"]);
    assert!((1800.0..=2050.0).contains(&peak), "peak {peak}");
    let asked: Vec<f64> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| f(&s["row"]["open"]["asked_iops"]))
        .collect();
    assert!((asked[0] / (0.25 * peak) - 1.0).abs() < 1e-6, "{asked:?}");
    assert!((asked[1] / (0.5 * peak) - 1.0).abs() < 1e-6, "{asked:?}");
    assert_eq!(doc["steps"][0]["asked"]["percent"].as_f64(), Some(25.0));
}

#[test]
fn a_real_file_at_a_modest_rate_holds_it_and_checks_its_reads() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let doc = json_of(&[
        "disk",
        d,
        "--size",
        "8m",
        "--rate",
        "500",
        "--runtime",
        "1s",
        "--seed",
        "9",
    ]);
    let row = &doc["steps"][0]["row"];
    let open = &row["open"];
    assert!(f(&open["asked_iops"]) == 500.0, "{open}");
    assert!(f(&open["response_us"]["p50"]) > 0.0, "{open}");
    assert!(row["verify"]["blocks"].as_u64().unwrap() > 0, "{row}");
    assert_eq!(row["verify"]["bad_blocks"].as_u64(), Some(0), "{row}");
    assert!(
        doc["peak"].is_null(),
        "no peak without a percent or a target"
    );
}

#[test]
fn bad_rates_are_one_line_errors_naming_the_option() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    for (rate, why) in [
        ("0", "is not a rate above 0"),
        ("fast", "is not a rate above 0"),
        ("100%..10%", "the range must go up"),
        ("10%..20k", "must all be rates or all percents"),
        ("1..1000:1", "steps; at most 100"),
        ("1..2:1e-300", "too many steps; at most 100"),
        ("20m", "is not a rate above 0"),
        ("50", "a p99 needs 100 at least"),
    ] {
        let e = usage_error(&["disk", d, "--rate", rate, "--runtime", "1s"]);
        assert!(e.contains("--rate") && e.contains(why), "{rate}: {e}");
    }
    let e = usage_error(&["disk", d, "--rate", "1k", "--best"]);
    assert!(e.contains("--best"), "{e}");
    let e = usage_error(&["disk", d, "--arrivals", "poisson"]);
    assert!(e.contains("--arrivals") && e.contains("--rate"), "{e}");
    let e = usage_error(&["disk", d, "--rate", "1k", "--depth-curve"]);
    assert!(e.contains("--rate"), "{e}");
    // --latency-target searches depths (or rates): a fixed --depth alone is refused.
    let e = usage_error(&[
        "disk",
        d,
        "--latency-target",
        "2ms",
        "--depth",
        "4",
        "--rw",
        "randread",
    ]);
    assert!(
        e.contains("--latency-target") && e.contains("--rate"),
        "{e}"
    );
    // A mix needs both directions: --mix with a rate and a one-direction --rw.
    let e = usage_error(&["disk", d, "--rate", "2k", "--rw", "randread", "--mix", "70"]);
    assert!(e.contains("--mix") && e.contains("randrw"), "{e}");
    let out = ioscope()
        .args(["disk", d, "--rate", "1k", "--preset", "fsync"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ctrl_c_stops_a_slow_rate_at_once_and_removes_the_scratch_file() {
    // One arrival every 500 ms for a minute: the loop sleeps between arrivals, and a sleep
    // does not end on a signal.
    let dir = tempfile::tempdir_in(".").unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .arg("disk")
        .arg(dir.path())
        .args(["--size", "4m", "--rate", "2", "--runtime", "60s"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start ioscope");
    // Past the fill, into the row's first sleep.
    std::thread::sleep(std::time::Duration::from_secs(2));
    // SAFETY: a signal to the child we started and still own.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // A safety limit, not a timing assertion: a loop that ignored the signal runs a minute.
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("ioscope disk --rate ignored Ctrl-C; it had to be killed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        crate::common::scratch_files(dir.path()).is_empty(),
        "the scratch file went with the interruption"
    );
}

#[test]
fn a_rate_far_beyond_the_device_counts_its_unissued_arrivals_without_walking_them() {
    // Ten million a second at a device of 1,000: about ten million arrivals are never
    // issued in a second, each in the response times at the wait it had.
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = simulated(
        dir.path(),
        "1:1ms",
        &["--rate", "10m", "--depth", "2", "--runtime", "1s"],
    );
    let open = &doc["steps"][0]["row"]["open"];
    let unissued = open["unissued"].as_u64().unwrap();
    let issued = open["issued"].as_u64().unwrap();
    assert!(unissued > 9_000_000, "{open}");
    assert!(issued < 1_500, "{open}");
    // Half the arrivals waited more than about half the run: the median is a lower bound
    // of hundreds of milliseconds, not the service time.
    assert!(f(&open["response_us"]["p50"]) > 300_000.0, "{open}");
}

#[test]
fn a_document_whose_steps_lack_their_open_loop_figures_is_refused() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/disk-rates.json"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (what, meddle) in [
        (
            "without its open-loop figures",
            &(|v: &mut Value| {
                v["steps"][0]["row"].as_object_mut().unwrap().remove("open");
            }) as &dyn Fn(&mut Value),
        ),
        ("asked no I/Os", &|v: &mut Value| {
            v["steps"][1]["row"]["open"]["asked_iops"] = 0.0.into()
        }),
        ("negative", &|v: &mut Value| {
            v["steps"][1]["row"]["open"]["achieved_iops"] = (-5.0).into()
        }),
    ] {
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        meddle(&mut doc);
        let path = dir.path().join("crafted.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        let out = ioscope().arg("report").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{what}");
        let line = crate::common::one_line_stderr(&out);
        assert!(line.contains(what), "{what}: {line}");
    }
}
