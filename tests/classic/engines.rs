//! Every engine in the table, through the library: the same checksum for the same bytes
//! whatever the engine, plan order or thread count; writes produce the generator's bytes;
//! a file shorter than the plan is an error for every reader (never a hang or a prefix).

use crate::common::*;
use ioscope::engine::flag;
use ioscope::engine::{ENGINES, Engine, Interruptible, Job, Op};
use ioscope::files::InputKind;
use ioscope::workload::plan::{Order, Plan};
use std::fs::File;
use std::sync::mpsc;
use std::time::Duration;

fn job<'a>(file: &'a File, op: Op, plan: Plan, threads: usize) -> Job<'a> {
    Job {
        file,
        name: "f",
        kind: InputKind::Regular,
        op,
        plan,
        to_end: false,
        threads,
        depth: 4,
        seed: 42,
        observer: &Interruptible,
    }
}

/// Runs `engine` on `job`, or says why it cannot run here.
fn run_or_skip(engine: &dyn Engine, job: &Job) -> Option<ioscope::engine::Moved> {
    // Engines that work from the current offset expect it at the plan's start.
    std::io::Seek::seek(&mut &*job.file, std::io::SeekFrom::Start(job.plan.start)).unwrap();
    match engine.check(job) {
        Ok(()) => Some(engine.run(job).expect("engine run")),
        Err(why) => {
            eprintln!("skipped: {} on {:?}: {why}", engine.name(), job.plan);
            None
        }
    }
}

#[test]
fn every_reader_gives_the_reference_xor_in_every_order() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    for len in [1usize, 3, 4, 5, 4095, 4096, 4097, (1 << 20) + 3, 3 << 20] {
        let data = pattern(len);
        let path = file_with(dir.path(), "f", &data);
        let file = File::open(&path).unwrap();
        let want = reference_xor(&data);
        for engine in ENGINES
            .iter()
            .filter(|e| e.caps().has(flag::READ | flag::MOVES_BYTES))
        {
            for order in [
                Order::Sequential,
                Order::Backward,
                Order::Random { seed: 5 },
            ] {
                for threads in [1, 3] {
                    let plan = Plan::new(0, len as u64, 64 << 10, order);
                    let j = job(&file, Op::Read, plan, threads);
                    if let Some(moved) = run_or_skip(*engine, &j) {
                        assert_eq!(
                            format!("{:08x}", moved.xor),
                            want,
                            "{} {order:?} {threads} threads, {len} bytes",
                            engine.name()
                        );
                        assert_eq!(moved.bytes, len as u64);
                    }
                }
            }
        }
    }
}

#[test]
fn every_writer_writes_the_generators_bytes_in_any_order() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let len = (1u64 << 20) + 7;
    let mut reference = None;
    for engine in ENGINES
        .iter()
        .filter(|e| e.caps().has(flag::WRITE | flag::MOVES_BYTES))
    {
        for order in [
            Order::Sequential,
            Order::Stride { stride: 3 },
            Order::Random { seed: 9 },
        ] {
            let path = dir.path().join(format!("w-{}", engine.name()));
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
                .unwrap();
            let plan = Plan::new(0, len, 4096, order);
            let Some(moved) = run_or_skip(*engine, &job(&file, Op::Write, plan, 2)) else {
                continue;
            };
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(bytes.len() as u64, len);
            assert_eq!(format!("{:08x}", moved.xor), reference_xor(&bytes));
            let first = reference.get_or_insert_with(|| bytes.clone());
            assert!(
                *first == bytes,
                "{} {order:?} wrote other bytes",
                engine.name()
            );
        }
    }
    assert!(reference.is_some(), "at least one engine writes");
}

#[test]
fn a_file_shorter_than_the_plan_is_an_error_for_every_reader_and_never_a_hang() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let path = file_with(dir.path(), "short", &pattern(3 << 20));
    for engine in ENGINES
        .iter()
        .filter(|e| e.caps().has(flag::READ | flag::MOVES_BYTES))
    {
        let name = engine.name();
        let (tx, rx) = mpsc::channel();
        let path = path.clone();
        // The plan claims 8 MiB, as if the file had shrunk from 8 to 3 MiB since stat.
        std::thread::spawn(move || {
            let engine = ioscope::engine::by_name(name).unwrap();
            let file = File::open(&path).unwrap();
            let j = job(&file, Op::Read, Plan::sequential(0, 8 << 20, 1 << 20), 4);
            let result = match engine.check(&j) {
                Ok(()) => Some(engine.run(&j).map_err(|e| format!("{e:#}"))),
                Err(why) => {
                    eprintln!("skipped: {name}: {why}");
                    None
                }
            };
            let _ = tx.send(result);
        });
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(None) => {}
            Ok(Some(Err(msg))) => assert!(
                msg.contains("ended at byte") && msg.contains("8388608 when reading began"),
                "{name}: {msg}"
            ),
            Ok(Some(Ok(moved))) => panic!("{name} read a shrunken file without error: {moved:?}"),
            Err(_) => panic!("{name} hung on a file shorter than its plan"),
        }
    }
}

#[test]
fn a_file_that_lost_only_part_of_its_last_page_is_an_error_for_every_reader() {
    // A mapping reads a truncated tail inside the last page as zeros, with no fault: only
    // the size tells. The plan claims 8292 bytes, as if 50 had been cut off since stat.
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let path = file_with(dir.path(), "tail", &pattern(8192 + 50));
    let file = File::open(&path).unwrap();
    for engine in ENGINES
        .iter()
        .filter(|e| e.caps().has(flag::READ | flag::MOVES_BYTES))
    {
        for threads in [1, 2] {
            let j = job(
                &file,
                Op::Read,
                Plan::sequential(0, 8192 + 100, 4096),
                threads,
            );
            if let Err(why) = engine.check(&j) {
                eprintln!("skipped: {}: {why}", engine.name());
                continue;
            }
            match engine.run(&j) {
                Err(e) => {
                    let msg = format!("{e:#}");
                    assert!(
                        msg.contains("ended at byte") && msg.contains("8292 when reading began"),
                        "{}: {msg}",
                        engine.name()
                    );
                }
                Ok(moved) => panic!(
                    "{} read a file 50 bytes shorter than its plan without error: {moved:?}",
                    engine.name()
                ),
            }
        }
    }
}

/// The engines that decide per chunk (in place where the page cache has huge pages, copied
/// elsewhere) give the reference XOR from any start, with chunks large enough to hold a
/// huge page; what they read in place and what they tested is accounted.
#[test]
fn per_chunk_engines_give_the_reference_xor_in_place_or_copied() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let len = (12 << 20) + 3;
    let data = pattern(len);
    // One large write: where the file system keeps large folios, some chunks are huge.
    let path = file_with(dir.path(), "f", &data);
    let file = File::open(&path).unwrap();
    let mut huge_seen = false;
    for engine in ENGINES.iter().filter(|e| e.caps().has(flag::PER_CHUNK)) {
        for start in [0usize, 4097] {
            for chunk in [2u64 << 20, 4 << 20, 8 << 20] {
                for threads in [1, 3] {
                    let plan = Plan::sequential(start as u64, (len - start) as u64, chunk);
                    let j = job(&file, Op::Read, plan, threads);
                    let Some(moved) = run_or_skip(*engine, &j) else {
                        continue;
                    };
                    let what = format!(
                        "{} from {start}, chunks {chunk}, {threads} threads",
                        engine.name()
                    );
                    assert_eq!(
                        format!("{:08x}", moved.xor),
                        reference_xor(&data[start..]),
                        "{what}"
                    );
                    assert_eq!(moved.bytes, (len - start) as u64, "{what}");
                    assert!(moved.in_place <= moved.bytes, "{what}: {moved:?}");
                    assert!(moved.tests.huge <= moved.tests.tested, "{what}: {moved:?}");
                    assert!(
                        moved.tests.tested <= moved.bytes.div_ceil(chunk),
                        "{what}: {moved:?}"
                    );
                    huge_seen |= moved.tests.huge > 0;
                    if moved.tests.huge == 0 {
                        assert_eq!(
                            moved.in_place, 0,
                            "{what}: nothing found huge, nothing in place"
                        );
                    }
                }
            }
        }
    }
    if !huge_seen {
        eprintln!("skipped: no huge pages in this page cache, so only the copying path ran");
    }
}
