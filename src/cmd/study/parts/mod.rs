//! The registry of study parts: one line per part, in the order the study runs them (the
//! calibration grows the scratch file, so it comes last). Each part is a file here
//! implementing `StudyPart` (`super::part`), `PartView` and `Kept`
//! (`report::views::part`); the line declares its module and puts it in `PARTS`, which the
//! run reads, and in the lists the lower layers read without naming a command: the views'
//! (`report::views::part::PART_VIEWS`: the page, the summary, the CSV files, the media page)
//! and the names' (`workload::study::STUDY_PARTS`: the estimates, `--only` and `--skip`).

use super::part::{Kept, PartView, StudyPart};
use crate::report::views::part::{Loaded, load_one, save_one};
use crate::results::study::Results;
use crate::workload::study::Part;

/// Declares each part's module and lists it, with the typed save and load of its result.
macro_rules! parts {
    ($($file:ident :: $part:ident,)*) => {
        $(pub mod $file;)*

        /// Every part, in the order the study runs them.
        pub const PARTS: &[&dyn StudyPart] = &[$(&$file::$part),*];

        /// The same parts, as the page shows them.
        #[linkme::distributed_slice(crate::report::views::part::PART_VIEWS)]
        static VIEW_LIST: &[&dyn PartView] = &[$(&$file::$part),*];

        /// Their names and times.
        #[linkme::distributed_slice(crate::workload::study::STUDY_PARTS)]
        static NAME_LIST: &[Part] = &[$($file::PART),*];

        /// Writes the kept results whose fields are of the `always` kind.
        pub(super) fn save<M: serde::ser::SerializeMap>(
            results: &Results,
            map: &mut M,
            always: bool,
        ) -> Result<(), M::Error> {
            $(save_one(&$file::$part, results, map, always)?;)*
            Ok(())
        }

        /// Whether `field` of a saved study is a part's result.
        pub(super) fn is_field(field: &str) -> bool {
            $(<$file::$part as Kept>::FIELD == Some(field) ||)* false
        }

        /// The part's result saved under `field`: `None` when `field` is no part's.
        pub(super) fn load(field: &str, value: serde_json::Value) -> Option<Loaded> {
            let mut value = Some(value);
            $(if let Some(r) = load_one(&$file::$part, field, &mut value) {
                return Some(r);
            })*
            None
        }
    };
}

parts! {
    write_read::WriteRead,
    read_sweep::ReadSweep,
    cache::Cache,
    syscalls::Syscalls,
    compare::Compare,
    write_sweep::WriteSweep,
    patterns::Patterns,
    disk::Disk,
    transfer::Transfer,
    calibrate::Calibrate,
}

/// Every part's names, in the order the study runs them.
pub fn all() -> impl Iterator<Item = Part> {
    crate::workload::study::all()
}

/// The part called `name` (`read-sweep`).
pub fn by_name(name: &str) -> Option<&'static dyn StudyPart> {
    PARTS.iter().copied().find(|p| p.part().name() == name)
}

/// Every part's names, for the value list of `--only` and `--skip`.
static ALL: std::sync::LazyLock<Vec<Part>> = std::sync::LazyLock::new(|| all().collect());

impl clap::ValueEnum for Part {
    fn value_variants<'a>() -> &'a [Self] {
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.about()))
    }
}

/// Every part's name, for the error on a name that is none.
static NAMES: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| all().map(|p| p.name()).collect());

/// A part read back by its name (the `part` of a saved step).
impl<'de> serde::Deserialize<'de> for Part {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        by_name(&name)
            .map(|p| p.part())
            .ok_or_else(|| serde::de::Error::unknown_variant(&name, &NAMES))
    }
}

/// Saves `results` under their parts' fields, as today's field names have them: the fields
/// older studies always wrote first (`null` when absent), then those written only when kept,
/// each in the order the parts run.
impl serde::Serialize for Results {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for always in [true, false] {
            save(self, &mut map, always)?;
        }
        map.end()
    }
}

/// Reads the parts' results back from the fields of a saved study (other fields skipped).
impl<'de> serde::Deserialize<'de> for Results {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Results;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the fields of a study")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Results, A::Error> {
                let mut out = Results::default();
                while let Some(key) = map.next_key::<String>()? {
                    if !is_field(&key) {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        continue;
                    }
                    let value: serde_json::Value = map.next_value()?;
                    match load(&key, value) {
                        Some(Ok(Some((part, r)))) => out.put_box(part, r),
                        Some(Ok(None)) | None => {}
                        Some(Err(e)) => {
                            return Err(serde::de::Error::custom(format!("{key}: {e}")));
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(Visit)
    }
}
