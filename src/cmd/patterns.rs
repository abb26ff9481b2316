//! `patterns`: iozone's tests on one file, each measured honestly. Write, rewrite, read,
//! reread, random read and write, backward read, record rewrite, stride read and a mixed
//! random read/write, at a record size and a file size (or, in auto mode, over record sizes
//! × file sizes as iozone's `-a`). Offsets come from the plans in `workload::plan`; every
//! random test carries the histogram of where its records fell. Write-type results show
//! the time without fsync, the fsync, the headline that includes it, what iozone's default
//! (no fsync) would have said, and the close; read-type results start in a proven cache
//! state, and every run carries the kernel's counters. Written data is laid out before the
//! clock starts (`workload::ring`, written by `engine::prepared`), so a write's time is its
//! system calls', as iozone's rewritten buffer; reads are checked against its known XOR.

use super::inplace;
use crate::engine;
use crate::engine::mixed::Mixed;
use crate::engine::prepared::Prepared;
use crate::error::{Failure, input};
use crate::files::{self, CreatePolicy, InputKind, OutputFile};
use crate::harness::{Harness, Sample, Setup, Target};
use crate::measure::cache::{self, CacheState};
use crate::measure::meter::Claim;
use crate::measure::stats::summarize;
use crate::options::PatternsOptions;
pub use crate::results::patterns::{DataPrep, PatternResult, PatternRun, PatternsReport};
use crate::units::format_size;
use crate::warning::{self, Warning};
use crate::workload::data::fresh_seed;
pub use crate::workload::patterns::Test;
use crate::workload::plan::{Coverage, Order, Plan};
use crate::workload::ring::{self, Ring};
use crate::workload::verify::{InPlace, Written};
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};

/// Runs the tests; `save` receives the report so far after every result.
pub fn execute(
    options: &PatternsOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&PatternsReport) -> Result<()>,
) -> Result<PatternsReport> {
    let mut report = PatternsReport {
        path: files::display_name(&options.path),
        seed: fresh_seed(),
        runs: options.runs.min_runs,
        until_stable: options.runs.until_stable(),
        cache: options.cache,
        stride: options.stride,
        read_percent: options.read_percent,
        draws: options.draws,
        sizes: options.sizes.clone(),
        records: options.records.clone(),
        auto: options.auto,
        data: None,
        results: Vec::new(),
        complete: false,
        warnings: Vec::new(),
        caveats: Vec::new(),
    };
    // The writers carry their data (and the mixed one its ratio); the engine table's
    // engines are all static.
    let engine: &'static Prepared = Box::leak(Box::new(Prepared::new(None)));
    let mixed: &'static Prepared = Box::leak(Box::new(Prepared::new(Some(Mixed::new(
        options.read_percent,
        report.seed,
    )))));
    let mut run_all = || -> Result<()> {
        for &size in &options.sizes {
            let mut out = create(options, size)?;
            for &record in options.records.iter().filter(|&&r| r <= size) {
                // Laid out before any test of this record size, timed apart.
                let claim = Claim {
                    bytes: ring::PERIOD + record,
                    ..Claim::default()
                };
                let (data, seconds) = harness.time(&claim, || Ring::new(report.seed, record));
                let prep = report.data.get_or_insert(DataPrep {
                    block_bytes: ring::PERIOD,
                    stamp_every: ring::STAMP_EVERY,
                    bytes: 0,
                    seconds: 0.0,
                });
                prep.bytes = prep.bytes.max(data.bytes());
                prep.seconds += seconds;
                let expected = data.xor_of(0, size);
                if options.tests.contains(&Test::Mixed) {
                    mixed.load(data.clone());
                }
                engine.load(data);
                let mut bench = Bench {
                    options,
                    harness,
                    out: &out,
                    size,
                    record,
                    seed: report.seed,
                    engine,
                    mixed,
                    expected,
                };
                for &test in &options.tests {
                    let (result, interrupted) = bench.measure(test)?;
                    for (i, run) in result.runs.iter().enumerate() {
                        let at = format!(
                            "{} at {}, {}, run {}",
                            test.name(),
                            format_size(record),
                            format_size(size),
                            i + 1
                        );
                        report
                            .warnings
                            .extend(warning::of_sample(&run.sample, Some(at)));
                    }
                    report.results.push(result);
                    save(&report)?;
                    if let Some(e) = interrupted {
                        return Err(e);
                    }
                }
            }
            // Ctrl-C during an fsync that could not be interrupted: the run is not whole.
            crate::interrupt::check()?;
            // Kept only once every test of this size ran: a partial file is never kept.
            if options.keep {
                if options.path.is_dir() {
                    out.keep_on_drop(true);
                } else {
                    out.finish()?;
                }
            }
        }
        Ok(())
    };
    match run_all() {
        Ok(()) => report.complete = true,
        // Ctrl-C at any moment, before the first result too: the results so far (maybe
        // none) are the result (exit 130).
        Err(e) if crate::error::exit_kind(&e) == crate::error::ExitKind::Interrupted => {
            report.warnings.push(Warning::Partial);
        }
        Err(e) => return Err(e),
    }
    let at = |r: &PatternResult| {
        format!(
            "{} at {}, {}",
            r.test.name(),
            format_size(r.record),
            format_size(r.file_bytes)
        )
    };
    // Repeated until stable, a test's spread is judged by its interval; a fixed count's by
    // the spread rule.
    let spread = warning::spread(
        report.until_stable,
        report
            .results
            .iter()
            .map(|r| (at(r), &r.bytes_per_second, r.settled, r.runs.len())),
    );
    report.warnings.extend(spread);
    let interference = warning::interference(report.results.iter().flat_map(|r| {
        let at = format!(
            "{} at {}, {}",
            r.test.name(),
            format_size(r.record),
            format_size(r.file_bytes)
        );
        r.runs
            .iter()
            .map(move |run| (Some(at.clone()), warning::Marks::from(&run.sample)))
    }));
    report.warnings.extend(interference);
    // The write cache beside the first write-type test's fsync, and the file system's
    // compression (the data is ioscope's own: incompressible).
    let dir = if options.path.is_dir() {
        options.path.clone()
    } else {
        files::parent_dir(&options.path)
    };
    if let Some(w) = report.results.iter().find(|r| r.fsync_seconds.is_some())
        && let Ok(f) = std::fs::File::open(&dir)
    {
        report.caveats = super::caveats::of_write(&f, &dir, w.file_bytes, w.fsync_seconds);
    }
    // The fastest test set against the link of the device behind the directory.
    if !report.results.is_empty() {
        let fastest = super::caveats::fastest(report.results.iter().map(|r| {
            (
                format!(
                    "{} of {}",
                    r.test.name(),
                    crate::units::format_size(r.file_bytes)
                ),
                r.bytes_per_second.median,
            )
        }));
        report.caveats.push(super::caveats::link(&dir, fastest));
    }
    save(&report)?;
    Ok(report)
}

/// The test file for one file size: a scratch file in a directory (named by its size in
/// auto mode, so `--keep` keeps one per size), or the file named (created new: an existing
/// one is only replaced with `--force`, and then only its successor is written; it stays
/// whole unless `--keep` asks for the result to take its place). Removed afterwards, and
/// always when the run did not finish.
fn create(options: &PatternsOptions, size: u64) -> Result<OutputFile> {
    let out = if options.path.is_dir() {
        let tag = if options.auto {
            format!("patterns-{size}")
        } else {
            "patterns".to_string()
        };
        files::create_scratch(&options.path, &tag, size, options.min_free)?
    } else {
        let name = files::display_name(&options.path);
        if let Ok(meta) = std::fs::symlink_metadata(&options.path) {
            if meta.file_type().is_symlink() {
                // The same refusal as every other writer's.
                return Err(files::symlink_refusal(
                    &options.path,
                    &format!("write {name}"),
                ));
            }
            if !meta.file_type().is_file() {
                return Err(input(format!(
                    "patterns {name}: not a regular file or a directory"
                )));
            }
        }
        files::create_output(
            &options.path,
            size,
            CreatePolicy {
                force: options.force,
                allow_device: false,
                min_free: options.min_free,
            },
        )?
    };
    // The tests reopen the file for writing: the owner must be able to, whatever mode an
    // existing file passed on to its successor.
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(out.path()) {
        let mode = meta.permissions().mode();
        if mode & 0o600 != 0o600 {
            let _ =
                std::fs::set_permissions(out.path(), std::fs::Permissions::from_mode(mode | 0o600));
        }
    }
    Ok(out)
}

/// What every test of one file size and record size shares.
struct Bench<'a> {
    options: &'a PatternsOptions,
    harness: &'a Harness<'a>,
    out: &'a OutputFile,
    size: u64,
    record: u64,
    seed: u64,
    /// Writes every write-type test from data prepared ahead.
    engine: &'static Prepared,
    /// The mixed test, its writes from the same data.
    mixed: &'static Prepared,
    /// XOR of the whole file as written.
    expected: u32,
}

impl Bench<'_> {
    fn plan(&self, test: Test) -> Plan {
        let random = if self.options.draws {
            Order::Draws { seed: self.seed }
        } else {
            Order::Random { seed: self.seed }
        };
        let order = match test {
            Test::Write | Test::Rewrite | Test::Read | Test::Reread => Order::Sequential,
            Test::RandomRead | Test::RandomWrite | Test::Mixed => random,
            Test::BackwardRead => Order::Backward,
            Test::RecordRewrite => Order::Same,
            Test::StrideRead => Order::Stride {
                stride: self.stride(),
            },
        };
        Plan::new(0, self.size, self.record, order)
    }

    /// The stride: as given, or the default shrunk to fit a file of few records.
    fn stride(&self) -> u64 {
        let records = self.size.div_ceil(self.record);
        if self.options.stride_given {
            self.options.stride
        } else {
            self.options
                .stride
                .min(records.saturating_sub(1) / 2)
                .max(1)
        }
    }

    fn setup(&self, test: Test) -> Setup {
        match test {
            Test::Mixed => Setup::single(self.mixed),
            t if t.writes() => Setup::single(self.engine),
            _ if self.plan(test).is_sequential() => Setup::single(&engine::stream::Stream),
            _ => Setup::single(&engine::pread::Pread),
        }
    }

    /// Opens the test file again, for reading or for both: the file made for the tests
    /// (through `/proc/self/fd`), never what its name holds now. Between runs another
    /// program may have moved it or put a link or another file at its name: the run stops
    /// then, as `disk`'s does, and nothing is read or written through the name.
    fn open(&self, write: bool) -> Result<File> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let ours = files::file_id(self.out.file());
        let replaced = || {
            anyhow::anyhow!(
                "patterns {}: the file at this name was replaced during the run (moved, or another file or a link put there); stopped: nothing is written through the name",
                self.out.name()
            )
        };
        let named = std::fs::symlink_metadata(self.out.path()).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            Some((m.dev(), m.ino())) == ours
        });
        if !named {
            return Err(replaced());
        }
        let fd = std::path::PathBuf::from(format!("/proc/self/fd/{}", self.out.file().as_raw_fd()));
        let (path, flags) = if fd.exists() {
            (fd.as_path(), 0)
        } else {
            (self.out.path(), libc::O_NOFOLLOW)
        };
        let file = OpenOptions::new()
            .read(true)
            .write(write)
            .custom_flags(flags)
            .open(path)
            .with_context(|| format!("open {} for the patterns", self.out.name()))?;
        if files::file_id(&file) != ours {
            return Err(replaced());
        }
        Ok(file)
    }

    fn target<'f>(&'f self, file: &'f File) -> Target<'f> {
        Target {
            file,
            name: self.out.name(),
            kind: InputKind::Regular,
            device: None,
        }
    }

    /// Runs `test`'s timed runs; a file that does not hold its data yet is written first.
    /// Interrupted after some runs, it returns those (summarized) and the interruption.
    fn measure(&mut self, test: Test) -> Result<(PatternResult, Option<anyhow::Error>)> {
        let written = self.out.file().metadata().map(|m| m.len()).unwrap_or(0);
        if written != self.size && test != Test::Write {
            self.write_run(Test::Write)?;
        }
        let mut runs: Vec<PatternRun> = Vec::new();
        let mut repeats = crate::measure::converge::Repeats::new(self.options.runs);
        let mut starts = crate::measure::cpus::Starts::new();
        while repeats.more() {
            starts.next();
            match self.one(test) {
                Ok(run) => {
                    repeats.push_marked(
                        run.sample.bytes_per_second(),
                        run.sample.elapsed.seconds,
                        crate::warning::Marks::from(&run.sample).interfered(),
                    );
                    runs.push(run);
                }
                Err(e)
                    if matches!(e.downcast_ref::<Failure>(), Some(Failure::Interrupted))
                        && !runs.is_empty() =>
                {
                    return Ok((self.summarize(test, runs), Some(e)));
                }
                Err(e) => return Err(e),
            }
        }
        Ok((self.summarize(test, runs), None))
    }

    fn one(&self, test: Test) -> Result<PatternRun> {
        match test {
            Test::Mixed => self.mixed_run(),
            t if t.writes() => self.write_run(t),
            t => self.read_run(t),
        }
    }

    /// A write-type run on a descriptor of its own, so its close() can be timed after.
    fn write_run(&self, test: Test) -> Result<PatternRun> {
        let file = self.open(true)?;
        let sample = self.harness.write_to(
            self.target(&file),
            &self.setup(test),
            self.plan(test),
            self.seed,
            test == Test::Write,
        )?;
        let ((), close) = self.harness.time(&Claim::calls(1), || drop(file));
        Ok(PatternRun {
            sample,
            close_seconds: Some(close),
            verified: None,
            in_place: None,
            split: None,
        })
    }

    fn read_run(&self, test: Test) -> Result<PatternRun> {
        let file = self.open(false)?;
        let target = self.target(&file);
        let plan = self.plan(test);
        // Reread is read's second pass: the pages read leaves behind, warm.
        let state = if test == Test::Reread {
            CacheState::Warm
        } else {
            self.options.cache
        };
        crate::hooks::corrupt(self.out.path(), self.out.name(), plan.start, plan.block)?;
        self.harness
            .prepare(target, &plan, state, self.options.drop_caches)?;
        let sample = self
            .harness
            .read(target, &self.setup(test), plan, false, state)?;
        let whole = Coverage::of(&plan).every_once() || plan.is_sequential();
        let verified = whole.then_some(sample.moved.xor == self.expected);
        let in_place = Some(self.in_place(&file, &plan)?);
        Ok(PatternRun {
            sample,
            close_seconds: None,
            verified,
            in_place,
            split: None,
        })
    }

    /// Mixed: timed as a read (its cache state proven on the bytes it read), then fsync
    /// and close timed as for writes.
    fn mixed_run(&self) -> Result<PatternRun> {
        let file = self.open(true)?;
        let target = self.target(&file);
        let plan = self.plan(Test::Mixed);
        let state = self.options.cache;
        self.harness
            .prepare(target, &plan, state, self.options.drop_caches)?;
        let mut sample = self
            .harness
            .read(target, &self.setup(Test::Mixed), plan, false, state)?;
        let split = self.mixed.split();
        sample.cache = sample.cache.map(|p| {
            cache::prove(
                p.asked,
                p.residency_before,
                p.device_read_bytes,
                split.read_bytes,
                false,
            )
        });
        let (synced, fsync) = self.harness.time(&Claim::calls(1), || file.sync_all());
        synced.with_context(|| format!("fsync {}", self.out.name()))?;
        sample.elapsed.seconds += fsync;
        sample.fsync_seconds = Some(fsync);
        let ((), close) = self.harness.time(&Claim::calls(1), || drop(file));
        // Every record once, read or written: the XOR of all of them is the file's.
        let verified = Coverage::of(&plan)
            .every_once()
            .then_some(sample.moved.xor == self.expected);
        // Its writes put back the bytes the file held: the whole range stays checkable.
        let in_place = Some(self.in_place(&self.open(false)?, &plan)?);
        Ok(PatternRun {
            sample,
            close_seconds: Some(close),
            verified,
            in_place,
            split: Some(split),
        })
    }

    /// The check in place of the range `plan` spans, after the timed run, in blocks of a
    /// record.
    fn in_place(&self, file: &File, plan: &Plan) -> Result<InPlace> {
        inplace::verify(
            self.harness,
            file,
            self.out.name(),
            plan.extents(),
            Written::Stamped(self.seed),
            self.record,
        )
    }

    fn summarize(&self, test: Test, runs: Vec<PatternRun>) -> PatternResult {
        let rates: Vec<f64> = runs.iter().map(|r| r.sample.bytes_per_second()).collect();
        let median = |v: Vec<f64>| summarize(&v).map(|s| s.median);
        let without_fsync = test.writes().then(|| {
            let v: Vec<f64> = runs
                .iter()
                .map(|r| {
                    let s = r.sample.elapsed.seconds - r.sample.fsync_seconds.unwrap_or(0.0);
                    crate::units::per_second(r.sample.moved.bytes, s)
                })
                .collect();
            summarize(&v)
        });
        let verified: Vec<bool> = runs.iter().filter_map(|r| r.verified).collect();
        let plan = self.plan(test);
        PatternResult {
            test,
            file_bytes: self.size,
            record: self.record,
            bytes_per_second: summarize(&rates).expect("at least one run"),
            without_fsync: without_fsync.flatten(),
            fsync_seconds: test
                .writes()
                .then(|| median(runs.iter().filter_map(|r| r.sample.fsync_seconds).collect()))
                .flatten(),
            close_seconds: median(runs.iter().filter_map(|r| r.close_seconds).collect()),
            calls_per_second: median(runs.iter().map(|r| r.sample.calls_per_second()).collect())
                .unwrap_or(0.0),
            coverage: (!plan.is_sequential() && plan.order != Order::Backward)
                .then(|| Coverage::of(&plan)),
            verified: (!verified.is_empty()).then(|| verified.iter().all(|&v| v)),
            in_place: InPlace::merged(runs.iter().filter_map(|r| r.in_place.as_ref())),
            checks_ok: runs.iter().all(|r| r.sample.ok()),
            latency: {
                let samples: Vec<Sample> = runs.iter().map(|r| r.sample.clone()).collect();
                super::sweep::runs_latency(&samples)
            },
            settled: self.options.runs.outcome(&rates),
            runs,
        }
    }
}
