//! Saved results kept in tests/fixtures, and the variants made from them in code. A variant
//! is its base with a few fields edited (numbers that contradict the usual story, an older
//! schema name), written here as those edits rather than kept as a second copy of the base
//! (a study is 124 KB). `ioscope report` reads a variant from a file that [`fixture_file`]
//! writes.

use serde_json::Value;
use std::path::{Path, PathBuf};

const MIB: f64 = 1048576.0;

/// `tests/fixtures/FILE`.
pub fn fixture_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file)
}

/// The JSON document kept in `tests/fixtures/FILE`.
pub fn fixture_json(file: &str) -> Value {
    let path = fixture_path(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Sets the field at `pointer` (a JSON pointer, RFC 6901: `/rows/0/cold/device`), which
/// must exist, to `value`.
pub fn set(doc: &mut Value, pointer: &str, value: impl Into<Value>) {
    *doc.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no field {pointer}")) = value.into();
}

/// Sets every field named `key`, at any depth, to null.
pub fn null_every(doc: &mut Value, key: &str) {
    match doc {
        Value::Object(fields) => {
            for (name, value) in fields.iter_mut() {
                if name == key {
                    *value = Value::Null;
                } else {
                    null_every(value, key);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| null_every(v, key)),
        _ => {}
    }
}

/// Sets a summary's figures (`median`, `mean` = the median, `min`, `max`, `n`).
pub fn set_summary(s: &mut Value, median: f64, min: f64, max: f64, n: u64) {
    s["median"] = median.into();
    s["mean"] = median.into();
    s["min"] = min.into();
    s["max"] = max.into();
    s["n"] = n.into();
}

/// Sets a cache sample's rate by its time: `bytes / (mib_per_s × 2^20)` seconds.
pub fn set_rate(sample: &mut Value, mib_per_s: f64) {
    let bytes = sample["bytes"].as_f64().expect("bytes");
    sample["elapsed"]["seconds"] = (bytes / (mib_per_s * MIB)).into();
}

/// The result of the iozone test `test` in a study's patterns part.
pub fn iozone_result<'a>(doc: &'a mut Value, test: &str) -> &'a mut Value {
    doc["patterns"]["results"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["test"] == test)
        .unwrap_or_else(|| panic!("the fixture has {test}"))
}

/// A variant: its name, the kept fixture it is made from (both without `.json`), its edits.
struct Variant {
    name: &'static str,
    base: &'static str,
    edit: fn(&mut Value),
}

const VARIANTS: &[Variant] = &[
    // Today's documents under an older schema name: `report` decides by the schema alone.
    Variant {
        name: "run-v1",
        base: "run",
        edit: |doc| set(doc, "/schema", "ioscope/run/v1"),
    },
    Variant {
        name: "study-v2",
        base: "study-sentences",
        edit: |doc| set(doc, "/schema", "ioscope/study/v2"),
    },
    // Cold 852, warm 11200, cold again 3738 MiB/s (the issue's `ioscope cache`).
    Variant {
        name: "cache-cold-again-faster",
        base: "cache",
        edit: |doc| {
            let row = &mut doc["rows"][0];
            set_rate(&mut row["cold"], 852.0);
            set_rate(&mut row["warm"], 11200.0);
            set_rate(&mut row["cold_again"], 3738.0);
        },
    },
    // The rewrite at 0.65x the write, one run each.
    Variant {
        name: "study-rewrite-slower",
        base: "study-sentences",
        edit: |doc| {
            let write = iozone_result(doc, "write")["bytes_per_second"]["median"]
                .as_f64()
                .unwrap();
            let slow = 0.65 * write;
            let rewrite = &mut iozone_result(doc, "rewrite")["bytes_per_second"];
            set_summary(rewrite, slow, slow, slow, 1);
        },
    },
    // Write 1000 MiB/s (500..2500) and rewrite 1500 (900..2000), 5 runs each: they scatter
    // more than they differ.
    Variant {
        name: "study-spread-wider",
        base: "study-sentences",
        edit: |doc| {
            let write = &mut iozone_result(doc, "write")["bytes_per_second"];
            set_summary(write, 1000.0 * MIB, 500.0 * MIB, 2500.0 * MIB, 5);
            let rewrite = &mut iozone_result(doc, "rewrite")["bytes_per_second"];
            set_summary(rewrite, 1500.0 * MIB, 900.0 * MIB, 2000.0 * MIB, 5);
        },
    },
    // The study made on tmpfs: no block device under any part, none in the storage.
    Variant {
        name: "study-fsync-no-device",
        base: "study-sentences",
        edit: |doc| {
            null_every(doc, "device");
            for (field, value) in [
                ("filesystem", Value::from("tmpfs")),
                ("mount_point", "/dev/shm".into()),
                ("mount_source", "tmpfs".into()),
                ("read_ahead_kb", Value::Null),
                ("rotational", Value::Null),
                ("scheduler", Value::Null),
            ] {
                set(doc, &format!("/environment/storage/{field}"), value);
            }
        },
    },
];

/// The document of fixture `name` (without `.json`): the kept file's, or a variant's, made
/// from its base by its edits.
pub fn fixture_doc(name: &str) -> Value {
    match VARIANTS.iter().find(|v| v.name == name) {
        Some(variant) => {
            let mut doc = fixture_doc(variant.base);
            (variant.edit)(&mut doc);
            doc
        }
        None => fixture_json(&format!("{name}.json")),
    }
}

/// Fixture `name` (without `.json`) as a file to hand `ioscope report`: the kept
/// `tests/fixtures/NAME.json`, or a variant's document written to `dir/NAME.json`.
pub fn fixture_file(name: &str, dir: &Path) -> PathBuf {
    if !VARIANTS.iter().any(|v| v.name == name) {
        return fixture_path(&format!("{name}.json"));
    }
    let path = dir.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&fixture_doc(name)).unwrap();
    std::fs::write(&path, text + "\n").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}
