//! What could make a figure wrong, end to end and without root: a preallocated file, a
//! sparse file, a file with both written and unwritten parts, and compressible user data
//! each get the right verdict, and the warning that blames the file system stays away when
//! the file's extents explain the device's silence. Cases that need root and a special file
//! system (btrfs with compression on a loop device) run where they can be made.

use crate::common;

use crate::common::ioscope;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;
const BLAME: &str = "keeps pages after eviction";

/// A directory on the file system the build lives on (disk-backed where the checkout is;
/// /tmp may be tmpfs), or `None` with the reason when that file system keeps pages after
/// eviction or has no block device (cold reads cannot be proven there).
fn disk_dir() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let storage = ioscope::measure::env::Storage::of(dir.path());
    if storage.device.is_none() {
        eprintln!(
            "skipped: {} has no block device ({:?}): cold reads cannot be proven there",
            dir.path().display(),
            storage.filesystem
        );
        return None;
    }
    Some(dir)
}

/// `len` bytes preallocated with fallocate (unwritten extents), or `None` with the reason.
fn fallocated(dir: &Path, name: &str, len: u64) -> Option<PathBuf> {
    let path = dir.join(name);
    let f = std::fs::File::create(&path).expect("create");
    // SAFETY: fallocate on a descriptor we hold open, with plain integers.
    let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len as libc::off_t) };
    if rc != 0 {
        eprintln!(
            "skipped: fallocate refused here: {}",
            std::io::Error::last_os_error()
        );
        return None;
    }
    let map = ioscope::measure::extents::map(&f, 0, len).ok();
    if map.is_none_or(|m| m.unbacked_bytes() < len) {
        eprintln!("skipped: this file system maps preallocated blocks as data ({map:?})");
        return None;
    }
    Some(path)
}

fn caveat<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["caveats"]
        .as_array()
        .and_then(|a| a.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no {name} caveat in {}", doc["caveats"]))
}

fn cache_json(path: &Path, extra: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = ioscope()
        .arg("cache")
        .arg(path)
        .args(["--block-size", "1m", "--json"])
        .args(extra)
        .output()
        .expect("run ioscope");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "stdout is one JSON document: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

/// Whether the cold run's device bytes were counted (`/proc/self/io` readable).
fn counted(doc: &serde_json::Value) -> bool {
    !doc["rows"][0]["cold"]["cache"]["device_read_bytes"].is_null()
}

#[test]
fn a_preallocated_file_read_cold_is_not_the_device_and_the_file_system_is_not_blamed() {
    let Some(dir) = disk_dir() else { return };
    let Some(path) = fallocated(dir.path(), "prealloc", 16 * MIB) else {
        return;
    };
    let (code, doc) = cache_json(&path, &[]);
    if !counted(&doc) {
        eprintln!("skipped: /proc/self/io does not count device bytes here");
        return;
    }
    let extents = caveat(&doc, "extents");
    assert_eq!(extents["verdict"], "not_the_device", "{extents}");
    assert_eq!(extents["evidence"]["unwritten_bytes"], 16 * MIB);
    assert_eq!(
        doc["rows"][0]["cold"]["cache"]["unbacked_bytes"],
        16 * MIB,
        "the cold proof accounts for the unwritten bytes"
    );
    assert_eq!(code, Some(1), "a cold figure that is not the device fails");
    // The words: the extents are named, the file system is not blamed.
    let out = ioscope()
        .arg("cache")
        .arg(&path)
        .args(["--block-size", "1m"])
        .output()
        .expect("run ioscope");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stdout.contains("What could make this figure wrong")
            && stdout.contains("100% of the 16 MiB measured is unwritten extents")
            && stdout.contains("(not the device)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("unwritten extents or holes") && !stderr.contains(BLAME),
        "{stderr}"
    );
    // Told to keep it, the figure stays labelled and the exit code no longer fails.
    let (code, doc) = cache_json(&path, &["--allow-unwritten"]);
    assert_eq!(code, Some(0));
    assert_eq!(doc["allow_unwritten"], true);
    assert_eq!(caveat(&doc, "extents")["verdict"], "not_the_device");
}

#[test]
fn a_sparse_file_read_as_it_is_names_its_holes() {
    let Some(dir) = disk_dir() else { return };
    let path = dir.path().join("sparse");
    std::fs::File::create(&path)
        .and_then(|f| f.set_len(8 * MIB))
        .expect("truncate");
    let out = ioscope()
        .arg("run")
        .arg(&path)
        .args(["-r", "1m", "--json"])
        .output()
        .expect("run ioscope");
    assert!(
        out.status.success(),
        "run reads as it is and does not fail: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let extents = caveat(&doc, "extents");
    assert_eq!(extents["verdict"], "not_the_device", "{extents}");
    assert_eq!(extents["evidence"]["hole_bytes"], 8 * MIB);
    let text = ioscope()
        .arg("run")
        .arg(&path)
        .args(["-r", "1m"])
        .output()
        .expect("run ioscope");
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("100% of the 8 MiB measured is holes")
            && stdout.contains("zeros without the device"),
        "{stdout}"
    );
    assert!(!String::from_utf8_lossy(&text.stderr).contains(BLAME));
}

#[test]
fn a_file_partly_written_counts_each_part_and_the_cold_proof_names_the_rest() {
    use std::os::unix::fs::FileExt;
    let Some(dir) = disk_dir() else { return };
    let Some(path) = fallocated(dir.path(), "half", 8 * MIB) else {
        return;
    };
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open");
    f.write_all_at(&common::pattern(2 * MIB as usize), 0)
        .expect("write");
    f.sync_all().expect("fsync");
    let (code, doc) = cache_json(&path, &["--allow-unwritten"]);
    let extents = caveat(&doc, "extents");
    assert_eq!(extents["verdict"], "not_the_device", "{extents}");
    assert_eq!(extents["evidence"]["data_bytes"], 2 * MIB);
    assert_eq!(extents["evidence"]["unwritten_bytes"], 6 * MIB);
    assert_eq!(code, Some(0), "allowed");
    let out = ioscope()
        .arg("cache")
        .arg(&path)
        .args(["--block-size", "1m", "--allow-unwritten"])
        .output()
        .expect("run ioscope");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("75% of the 8 MiB measured is unwritten extents"),
        "{stdout}"
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains(BLAME));
}

#[test]
fn compressible_data_on_a_plain_file_system_is_measured_and_not_blamed_on_compression() {
    let Some(dir) = disk_dir() else { return };
    let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog\n"
        .iter()
        .copied()
        .cycle()
        .take(8 * MIB as usize)
        .collect();
    let path = common::file_with(dir.path(), "text", &text);
    std::fs::File::open(&path)
        .and_then(|f| f.sync_all())
        .expect("fsync");
    let (code, doc) = cache_json(&path, &[]);
    let compression = caveat(&doc, "compression");
    let fs = compression["evidence"]["file_system"]["fs_type"].clone();
    let ratio = compression["evidence"]["data"]["ratio"]
        .as_f64()
        .expect("a sampled ratio");
    assert!(ratio < 0.2, "repeated text compresses: {ratio}");
    if compression["evidence"]["file_system"]["mount_option"].is_string() {
        eprintln!("skipped: this file system is mounted with compression ({fs})");
        return;
    }
    assert_eq!(caveat(&doc, "extents")["verdict"], "ok");
    assert_eq!(compression["verdict"], "ok", "{compression}");
    if counted(&doc) {
        assert_eq!(
            code,
            Some(0),
            "written data read cold comes from the device"
        );
    }
    let out = ioscope()
        .arg("cache")
        .arg(&path)
        .args(["--block-size", "1m"])
        .output()
        .expect("run ioscope");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("explains it") && !stdout.contains("compress to"),
        "the device read every byte: no story about compression is told: {stdout}"
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains(BLAME));
}

#[test]
fn a_write_states_the_device_write_cache_beside_its_fsync() {
    let Some(dir) = disk_dir() else { return };
    let path = dir.path().join("w");
    let doc = common::json_of(&["run", path.to_str().expect("UTF-8 path"), "-w", "1m", "4"]);
    let c = caveat(&doc, "write_cache");
    assert!(
        c["evidence"]["fsync_seconds"].is_number(),
        "the fsync judged: {c}"
    );
    assert!(
        ["ok", "warn", "unknown"].contains(&c["verdict"].as_str().unwrap_or("")),
        "{c}"
    );
    if c["verdict"] == "unknown" {
        assert!(c["reason"].is_string(), "an unknown says why: {c}");
    }
    let compression = caveat(&doc, "compression");
    assert!(
        compression["evidence"]["data"].is_null(),
        "ioscope's own data is not sampled: it does not compress"
    );
}

#[test]
fn the_file_system_is_blamed_only_when_every_byte_is_written() {
    use ioscope::measure::cache::{CacheState, Residency, prove};
    use ioscope::warning::Warning;
    let r = Some(Residency {
        resident_pages: 0,
        total_pages: 256,
    });
    let words = |unbacked: Option<u64>| {
        let mut proof = prove(CacheState::Cold, r, Some(0), MIB, false);
        proof.unbacked_bytes = unbacked;
        ioscope::report::text::warning(&Warning::CacheState {
            at: None,
            proof,
            allowed: false,
        })
    };
    assert!(words(Some(0)).contains(BLAME));
    let unwritten = words(Some(MIB));
    assert!(
        !unwritten.contains(BLAME) && unwritten.contains("100% of the bytes read"),
        "{unwritten}"
    );
    let unknown = words(None);
    assert!(
        unknown.contains("not ruled out") && unknown.contains("if its data is written"),
        "{unknown}"
    );
}

/// A command line run as root, or `None` when it fails.
fn sh(cmd: &str, args: &[&str]) -> Option<()> {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(drop)
}

#[test]
fn zeros_on_a_compressing_btrfs_are_explained_by_its_compression() {
    if !common::is_root() {
        eprintln!("skipped: needs root to make a loop device and mount btrfs");
        return;
    }
    if sh("mkfs.btrfs", &["--version"]).is_none() {
        eprintln!("skipped: mkfs.btrfs is not installed");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let image = dir.path().join("btrfs.img");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(256 * MIB))
        .expect("image");
    let image_s = image.to_str().expect("UTF-8");
    let mnt_s = mnt.to_str().expect("UTF-8");
    if sh("mkfs.btrfs", &["-q", image_s]).is_none()
        || sh("mount", &["-o", "loop,compress=zstd", image_s, mnt_s]).is_none()
    {
        eprintln!("skipped: could not make and mount a btrfs on a loop device here");
        return;
    }
    struct Unmount(String);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = sh("umount", &[&self.0]);
        }
    }
    let _guard = Unmount(mnt_s.to_string());
    let path = common::file_with(&mnt, "zeros", &vec![0u8; 32 * MIB as usize]);
    std::fs::File::open(&path)
        .and_then(|f| f.sync_all())
        .expect("fsync");
    let (_, doc) = cache_json(&path, &[]);
    let c = caveat(&doc, "compression");
    assert_eq!(c["evidence"]["file_system"]["fs_type"], "btrfs");
    assert!(
        c["evidence"]["file_system"]["mount_option"]
            .as_str()
            .is_some_and(|o| o.starts_with("compress")),
        "{c}"
    );
    assert_eq!(c["verdict"], "warn", "{c}");
    let out = ioscope()
        .arg("cache")
        .arg(&path)
        .args(["--block-size", "1m"])
        .output()
        .expect("run ioscope");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if c["evidence"]["device_bytes"]
        .as_u64()
        .is_some_and(|d| d < 16 * MIB)
    {
        assert!(stdout.contains("compression explains it"), "{stdout}");
    }
}

#[test]
fn a_cold_sweep_of_a_preallocated_file_fails_unless_allowed_and_says_why() {
    let Some(dir) = disk_dir() else { return };
    let Some(path) = fallocated(dir.path(), "prealloc", 8 * MIB) else {
        return;
    };
    let sweep = |extra: &[&str]| {
        ioscope()
            .arg("sweep")
            .arg(&path)
            .args(["--cache", "cold", "--block-sizes", "1m", "--repeat", "2"])
            .args(extra)
            .output()
            .expect("run ioscope")
    };
    let refused = sweep(&[]);
    let doc = common::json_of(&[
        "sweep",
        path.to_str().expect("UTF-8 path"),
        "--cache",
        "cold",
        "--block-sizes",
        "1m",
        "--allow-unwritten",
    ]);
    if doc["points"][0]["runs"][0]["cache"]["device_read_bytes"].is_null() {
        eprintln!("skipped: /proc/self/io does not count device bytes here");
        return;
    }
    assert_eq!(
        refused.status.code(),
        Some(1),
        "not the device: a failed check"
    );
    assert!(!String::from_utf8_lossy(&refused.stderr).contains(BLAME));
    let allowed = sweep(&["--allow-unwritten"]);
    assert_eq!(allowed.status.code(), Some(0));
    // Refused, the warning names the flag; given it, it says the figure was kept as asked.
    let told = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    if told(&refused).contains("unwritten extents or holes") {
        assert!(
            told(&refused).contains("or pass --allow-unwritten"),
            "{}",
            told(&refused)
        );
        assert!(
            told(&allowed).contains("Kept, as --allow-unwritten asked")
                && !told(&allowed).contains("or pass --allow-unwritten"),
            "{}",
            told(&allowed)
        );
    }
    let stdout = String::from_utf8_lossy(&allowed.stdout);
    assert!(
        stdout.contains("(not the device) cold runs read zeros"),
        "{stdout}"
    );
    assert_eq!(caveat(&doc, "extents")["verdict"], "not_the_device");
}
