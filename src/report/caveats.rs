//! The one "What could make this figure wrong" block of a result, in text, Markdown and
//! HTML: a line per caveat, its verdict, and a sentence chosen from its evidence (the
//! thresholds are in [`crate::measure::caveat`]). An empty list renders as nothing, so
//! results saved before caveats existed look as they did.

use crate::measure::caveat::{
    Caveat, CompressionEvidence, Evidence, FAR_FEWER, FLUSH_FASTER_THAN_A_PLATTER_SECONDS,
    UNBACKED_AT_LEAST, Verdict, WriteCacheEvidence,
};
use crate::measure::extents::{ExtentMap, Method, share};
use crate::units::{format_seconds, format_size};
use std::fmt::Write;

/// The block's title.
pub const TITLE: &str = "What could make this figure wrong";

fn pct(part: u64, whole: u64) -> String {
    format!("{:.0}%", 100.0 * share(part, whole))
}

fn extents_sentence(m: &ExtentMap, verdict: Verdict, reason: Option<&str>) -> String {
    if verdict == Verdict::Unknown {
        return format!(
            "the extent map could not be read ({}): unwritten extents and holes, which read as zeros without the device, are not ruled out",
            reason.unwrap_or("no reason given")
        );
    }
    let how = match m.method {
        Some(Method::SeekData) => {
            " (by SEEK_DATA/SEEK_HOLE: FIEMAP is refused here, and this method counts unwritten extents as holes or as data, as the file system decides)"
        }
        _ => " (by FIEMAP)",
    };
    let total = m.range_bytes;
    let mut notes = Vec::new();
    if m.shared_bytes > 0 {
        notes.push(format!(
            "{} is shared with other files (reflinks, snapshots, deduplication): read from the device all the same",
            pct(m.shared_bytes, total)
        ));
    }
    if m.delalloc_bytes > 0 {
        notes.push(format!(
            "{} is not yet allocated (delayed allocation): still only in the page cache",
            pct(m.delalloc_bytes, total)
        ));
    }
    if m.inline_bytes > 0 {
        notes.push(format!(
            "{} is stored inline in the file system's metadata",
            format_size(m.inline_bytes)
        ));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!("; {}", notes.join("; "))
    };
    match verdict {
        Verdict::NotTheDevice => {
            let what = match (m.unwritten_bytes, m.hole_bytes) {
                (_, 0) => "unwritten extents".to_string(),
                (0, _) => "holes".to_string(),
                (u, h) => format!(
                    "unwritten extents ({}) and holes ({})",
                    pct(u, total),
                    pct(h, total)
                ),
            };
            format!(
                "{} of the {} measured is {what}: those reads return zeros without the device, so this is not a device figure (write the data first){how}{notes}",
                pct(m.unbacked_bytes(), total),
                format_size(total),
            )
        }
        Verdict::Warn => format!(
            "{} of the {} measured is in encoded (compressed or encrypted) extents: the device moves another number of bytes than the program{how}{notes}",
            pct(m.encoded_bytes, total),
            format_size(total)
        ),
        _ if m.unbacked_bytes() > 0 => format!(
            "{} of the {} measured is unwritten extents or holes, under the {:.0}% that would change the figure{how}{notes}",
            format_size(m.unbacked_bytes()),
            format_size(total),
            100.0 * UNBACKED_AT_LEAST
        ),
        _ => format!(
            "every byte of the {} measured is written data{how}{notes}",
            format_size(total)
        ),
    }
}

fn fs_part(e: &CompressionEvidence) -> String {
    let fs = e
        .file_system
        .fs_type
        .as_deref()
        .unwrap_or("this file system");
    match (
        e.file_system.file_flag,
        e.file_system.mount_option.as_deref(),
    ) {
        (Some(true), _) => format!("the file carries {fs}'s compress attribute (chattr +c)"),
        (Some(false), _) => format!("the file carries {fs}'s no-compress attribute (chattr +m)"),
        (None, Some(opt)) => format!("{fs} is mounted with {opt}"),
        (None, None) => format!("{fs} stores this file's data as it is"),
    }
}

fn compression_sentence(e: &CompressionEvidence, verdict: Verdict, reason: Option<&str>) -> String {
    let ratio = e.data.map(|d| format!("{:.0}%", 100.0 * d.ratio));
    let mut s = match (verdict, &ratio) {
        (Verdict::Unknown, _) => reason.unwrap_or("unknown").to_string(),
        (Verdict::Warn, Some(r)) => format!(
            "{}, and sampled blocks compress to {r} of their size: the device moves fewer bytes than the program, so the figure is partly the compressor's",
            fs_part(e)
        ),
        (_, None) if e.file_system.compresses() == Some(true) => format!(
            "{}, but ioscope's own data does not compress: the device moves what the program writes",
            fs_part(e)
        ),
        (_, Some(r)) if e.file_system.compresses() == Some(true) => format!(
            "{}, but sampled blocks compress only to {r} of their size: stored as they are",
            fs_part(e)
        ),
        _ => fs_part(e),
    };
    if e.shortfall() {
        let (p, d) = (e.program_bytes.unwrap_or(0), e.device_bytes.unwrap_or(0));
        let unbacked = e.unbacked_bytes.unwrap_or(0);
        let why = if p > 0 && share(unbacked, p) >= UNBACKED_AT_LEAST {
            format!(
                "unwritten extents or holes explain it ({} of the bytes read)",
                pct(unbacked, p)
            )
        } else if verdict == Verdict::Warn {
            "the file system's compression explains it".to_string()
        } else if e.resident_before.is_some_and(|r| r >= FAR_FEWER) {
            format!(
                "the page cache explains it ({:.0}% of the file was resident before)",
                100.0 * e.resident_before.unwrap_or(0.0)
            )
        } else {
            let data = match &ratio {
                Some(r) if e.compressible() == Some(true) => format!(
                    " (the data compresses to {r}, but the file system does not compress it)"
                ),
                _ => String::new(),
            };
            format!(
                "neither unwritten extents, holes, compression nor the page cache explains it{data}: a file system that keeps pages after eviction (tmpfs) or a cache below it"
            )
        };
        let _ = write!(
            s,
            ". The device moved {} for the program's {} (under {:.0}%): {why}",
            format_size(d),
            format_size(p),
            100.0 * FAR_FEWER
        );
    }
    s
}

fn write_cache_sentence(e: &WriteCacheEvidence, verdict: Verdict, reason: Option<&str>) -> String {
    let dev = e.cache.device.as_deref().unwrap_or("no device");
    let mode = e.cache.mode.as_deref().unwrap_or("mode unknown");
    let fua = match e.cache.fua {
        Some(true) => ", FUA",
        Some(false) => ", no FUA",
        None => "",
    };
    let flush = e.fsync_seconds.map_or(String::new(), |s| {
        format!(
            " an fsync{} took {}",
            e.bytes
                .map_or(String::new(), |b| format!(" of {}", format_size(b))),
            format_seconds(s)
        )
    });
    match verdict {
        Verdict::Warn => format!(
            "{dev} ({mode}{fua}) says it rotates, yet{flush}: under {}, faster than a platter turns, so a volatile cache acknowledged it (or this is a virtual disk that says it rotates); the fsync figure is the cache's, not the medium's",
            format_seconds(FLUSH_FASTER_THAN_A_PLATTER_SECONDS)
        ),
        Verdict::Ok => format!(
            "{dev} ({mode}{fua}): no volatile write cache, so an acknowledged fsync is on the medium as far as the device tells;{flush}"
        ),
        _ => format!(
            "{dev} ({mode}{fua}{}): {}",
            if flush.is_empty() {
                String::new()
            } else {
                format!(";{flush}")
            },
            reason.unwrap_or("unknown")
        ),
    }
}

/// Bytes per second as the disk panel writes them (MB/s, 10^6).
fn mb_s(bytes_per_second: f64) -> String {
    format!("{:.0} MB/s", bytes_per_second / 1e6)
}

fn link_sentence(
    e: &crate::measure::caveat::LinkEvidence,
    verdict: Verdict,
    reason: Option<&str>,
) -> String {
    let dev = e.device.as_deref().unwrap_or("the device");
    let Some(l) = &e.link else {
        return reason.unwrap_or("unknown").to_string();
    };
    let fastest = match (&e.fastest, e.fastest_bytes_per_second) {
        (Some(name), Some(rate)) => format!("{name} at {}", mb_s(rate)),
        _ => "no figure".to_string(),
    };
    let carries = format!(
        "its {} link at {} carries at most {} after encoding",
        l.transport,
        l.current,
        mb_s(l.ceiling_bytes_per_second)
    );
    match verdict {
        Verdict::NotTheDevice => format!(
            "{dev}: {carries}, yet {fastest} passed it: that figure came from a cache, not through the link from the device"
        ),
        Verdict::Warn => format!(
            "{dev}: {carries}, trained below its maximum ({}, {}): every figure is capped there before the device (a slot or port, a cable, a hub?); the fastest, {fastest}",
            l.max.as_deref().unwrap_or("?"),
            l.max_bytes_per_second.map_or("?".to_string(), mb_s)
        ),
        _ => format!("{dev}: {carries}; the fastest figure, {fastest}, is within it"),
    }
}

/// The sentence for one caveat, chosen from its verdict and evidence.
pub fn sentence(c: &Caveat) -> String {
    let reason = c.reason.as_deref();
    match &c.evidence {
        Evidence::Extents(m) => extents_sentence(m, c.verdict, reason),
        Evidence::Compression(e) => compression_sentence(e, c.verdict, reason),
        Evidence::WriteCache(e) => write_cache_sentence(e, c.verdict, reason),
        // The write-back check chose its sentence from the series when it ran.
        Evidence::WriteBackCliff(f) => f.evidence.clone(),
        Evidence::Link(e) => link_sentence(e, c.verdict, reason),
    }
}

fn label(c: &Caveat) -> String {
    format!("{} ({})", c.name().replace('_', " "), c.verdict.name())
}

/// The block as terminal text: a line per caveat that is not ok, and the names of those
/// that are on one line; nothing when there are none.
pub fn text(caveats: &[Caveat]) -> String {
    if caveats.is_empty() {
        return String::new();
    }
    let (ok, other): (Vec<&Caveat>, Vec<&Caveat>) =
        caveats.iter().partition(|c| c.verdict == Verdict::Ok);
    let names = |cs: &[&Caveat]| {
        cs.iter()
            .map(|c| c.name().replace('_', " "))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if other.is_empty() {
        return format!("{TITLE}: nothing found ({} checked)\n", names(&ok));
    }
    let mut out = format!("{TITLE}:\n");
    for c in &other {
        let _ = writeln!(out, "  {}: {}", label(c), sentence(c));
    }
    if !ok.is_empty() {
        let _ = writeln!(out, "  checked and ok: {}", names(&ok));
    }
    out
}

/// The block as Markdown (a captioned list); `None` when empty.
pub fn markdown(caveats: &[Caveat]) -> Option<String> {
    (!caveats.is_empty()).then(|| {
        let items: Vec<String> = caveats
            .iter()
            .map(|c| format!("{}: {}", label(c), sentence(c)))
            .collect();
        super::markdown::list(&format!("{TITLE}:"), &items)
    })
}

/// The block as an HTML fragment (a heading and a list); empty when there are none.
pub fn html(caveats: &[Caveat]) -> String {
    use super::html::escape;
    if caveats.is_empty() {
        return String::new();
    }
    let mut out = format!("<h3>{}</h3>\n<ul class=\"warn\">\n", escape(TITLE));
    for c in caveats {
        let _ = writeln!(
            out,
            "<li><strong>{}</strong>: {}</li>",
            escape(&label(c)),
            crate::report::html::prose(&sentence(c))
        );
    }
    out.push_str("</ul>\n");
    out
}

#[cfg(test)]
mod tests {
    fn sata(current: &str, max: &str) -> crate::measure::link::Link {
        crate::measure::link::Link {
            transport: "sata".into(),
            current: current.into(),
            max: Some(max.into()),
            ceiling_bytes_per_second: if current.starts_with('3') {
                300e6
            } else {
                600e6
            },
            max_bytes_per_second: Some(600e6),
        }
    }

    #[test]
    fn a_figure_past_the_link_came_from_a_cache_and_a_slow_link_caps_every_figure() {
        use crate::measure::caveat::link;
        let past = link(
            Some("sda"),
            Ok(sata("6.0 Gbps", "6.0 Gbps")),
            Some(("SEQ1M Q8T1 read".into(), 900e6)),
        );
        assert_eq!(past.verdict, Verdict::NotTheDevice);
        assert_eq!(
            sentence(&past),
            "sda: its sata link at 6.0 Gbps carries at most 600 MB/s after encoding, yet SEQ1M Q8T1 read at 900 MB/s passed it: that figure came from a cache, not through the link from the device"
        );
        let slow = link(
            Some("sda"),
            Ok(sata("3.0 Gbps", "6.0 Gbps")),
            Some(("SEQ1M Q8T1 read".into(), 280e6)),
        );
        assert_eq!(slow.verdict, Verdict::Warn);
        assert!(sentence(&slow).contains("trained below its maximum (6.0 Gbps, 600 MB/s)"));
        let fine = link(
            Some("sda"),
            Ok(sata("6.0 Gbps", "6.0 Gbps")),
            Some(("SEQ1M Q8T1 read".into(), 550e6)),
        );
        assert_eq!(fine.verdict, Verdict::Ok);
        let unknown = link(Some("vda"), Err("vda is a virtio disk".into()), None);
        assert_eq!(unknown.verdict, Verdict::Unknown);
        assert_eq!(sentence(&unknown), "vda is a virtio disk");
    }

    use super::*;
    use crate::measure::caveat;
    use crate::measure::compression::{Compressibility, FsCompression};

    fn map(data: u64, unwritten: u64, holes: u64) -> ExtentMap {
        ExtentMap {
            method: Some(Method::Fiemap),
            range_bytes: data + unwritten + holes,
            data_bytes: data,
            unwritten_bytes: unwritten,
            hole_bytes: holes,
            ..ExtentMap::default()
        }
    }

    #[test]
    fn a_partly_unwritten_file_is_named_for_what_it_is() {
        let s = sentence(&caveat::extents(Ok(map(38 << 20, 62 << 20, 0))));
        assert!(
            s.starts_with("62% of the 100 MiB measured is unwritten extents:")
                && s.contains("zeros without the device"),
            "{s}"
        );
        let s = sentence(&caveat::extents(Ok(map(2 << 20, 1 << 20, 1 << 20))));
        assert!(
            s.starts_with("50% of the 4 MiB measured is unwritten extents (25%) and holes (25%)"),
            "{s}"
        );
        let s = sentence(&caveat::extents(Ok(map(1 << 20, 0, 0))));
        assert!(s.starts_with("every byte"), "{s}");
        assert!(text(&[]).is_empty() && markdown(&[]).is_none() && html(&[]).is_empty());
    }

    fn evidence(ratio: f64, fs: &str, device: u64, resident: f64) -> CompressionEvidence {
        CompressionEvidence {
            file_system: FsCompression {
                fs_type: Some(fs.into()),
                mount_option: (fs == "btrfs").then(|| "compress=zstd:3".to_string()),
                file_flag: None,
            },
            data: Some(Compressibility {
                sampled_blocks: 16,
                sampled_bytes: 16 << 16,
                ratio,
            }),
            program_bytes: Some(100 << 20),
            device_bytes: Some(device),
            unbacked_bytes: Some(0),
            resident_before: Some(resident),
        }
    }

    #[test]
    fn the_device_moving_far_fewer_bytes_is_explained_only_by_what_the_numbers_support() {
        // Zeros on ext4, read from the device in full: no shortfall, nothing said of the data.
        let s = sentence(&caveat::compression(evidence(0.01, "ext4", 100 << 20, 0.0)));
        assert!(!s.contains("explains") && !s.contains("compress to"), "{s}");
        // Zeros on a compressing btrfs that moved a tenth: compression explains it.
        let s = sentence(&caveat::compression(evidence(0.01, "btrfs", 10 << 20, 0.0)));
        assert!(s.contains("compression explains it"), "{s}");
        // Random data on the same btrfs, cached: the cache explains it, not compression.
        let s = sentence(&caveat::compression(evidence(1.0, "btrfs", 0, 1.0)));
        assert!(s.contains("page cache explains it"), "{s}");
        // Zeros on ext4, evicted, device read nothing: no story fits but the FS's own.
        let s = sentence(&caveat::compression(evidence(0.01, "ext4", 0, 0.0)));
        assert!(
            s.contains("neither") && s.contains("does not compress it"),
            "{s}"
        );
    }
}
