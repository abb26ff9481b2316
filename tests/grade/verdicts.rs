//! Each reader's verdicts and diagnosis: one C reader per bug, and a correct one.

use super::*;

#[test]
fn a_correct_reader_is_correct_on_every_size_and_exits_0() {
    let Some((code, doc)) = graded("correct") else {
        return;
    };
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(verdicts(&doc).len(), 9);
    only_these_fail(&doc, |_| false, "");
    assert!(kinds(&doc).is_empty());
    // Its printed XOR is the reference on every run.
    for s in doc["sizes"].as_array().unwrap() {
        for r in s["runs"].as_array().unwrap() {
            assert_eq!(r["printed"], s["reference"]);
        }
    }
}

#[test]
fn a_reader_that_drops_the_last_bytes_is_diagnosed_so() {
    let Some((code, doc)) = graded("drops_tail") else {
        return;
    };
    assert_eq!(code, 1);
    only_these_fail(&doc, |s| s % 4 != 0, "wrong");
    assert_eq!(kinds(&doc), ["drops_tail"]);
    let s = &doc["sizes"][1];
    assert_eq!(s["size"], 1);
    assert_ne!(s["runs"][0]["printed"], s["reference"]);
}

#[test]
fn a_crash_on_the_empty_file_is_diagnosed_with_its_signal() {
    let Some((code, doc)) = graded("empty_crash") else {
        return;
    };
    assert_eq!(code, 1);
    only_these_fail(&doc, |s| s == 0, "crashed");
    assert_eq!(doc["sizes"][0]["runs"][0]["signal"], "SIGSEGV");
    assert_eq!(kinds(&doc), ["empty"]);
}

#[test]
fn a_fixed_buffer_crashes_from_the_size_past_it() {
    let Some((_, doc)) = graded("small_buffer") else {
        return;
    };
    only_these_fail(&doc, |s| s > 10 << 20, "crashed");
    assert_eq!(kinds(&doc), ["crashes_from"]);
    let sentence = doc["diagnoses"][0]["sentence"].as_str().unwrap();
    assert!(sentence.contains("from 10 MiB + 3 up"), "{sentence}");
}

#[test]
fn different_answers_for_one_file_are_called_not_deterministic() {
    let Some((code, doc)) = graded("racy") else {
        return;
    };
    assert_eq!(code, 1);
    assert_eq!(kinds(&doc)[0], "unstable");
    assert!(
        doc["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["distinct"].as_array().unwrap().len() == 2)
    );
}

#[test]
fn big_endian_words_are_named() {
    let Some((_, doc)) = graded("big_endian") else {
        return;
    };
    // The empty file's XOR is 0 either way.
    only_these_fail(&doc, |s| s > 0, "wrong");
    assert_eq!(kinds(&doc), ["byte_order"]);
}

#[test]
fn a_reader_that_prints_no_hex_prints_no_xor() {
    let Some((_, doc)) = graded("silent") else {
        return;
    };
    only_these_fail(&doc, |_| true, "wrong");
    assert_eq!(kinds(&doc), ["no_xor"]);
    assert!(doc["sizes"][2]["runs"][0]["printed"].is_null());
}

#[test]
fn the_right_xor_with_status_1_is_exit_1_on_every_size() {
    let Some((code, doc)) = graded("exit_one") else {
        return;
    };
    assert_eq!(code, 1);
    only_these_fail(&doc, |_| true, "exit");
    assert_eq!(doc["sizes"][3]["runs"][0]["exit_code"], 1);
    assert_eq!(kinds(&doc), ["exit_status"]);
}

#[test]
fn a_reader_that_hangs_at_the_end_of_the_file_times_out_once_per_size() {
    let Some((_, doc)) = graded("hang_tail") else {
        return;
    };
    only_these_fail(&doc, |s| s % 4 != 0, "timeout");
    assert_eq!(kinds(&doc), ["tail"]);
    // A run past its deadline is not repeated.
    assert_eq!(doc["sizes"][1]["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn thirty_two_bit_sizes_and_one_read_call_show_at_4_gib_and_2_gib() {
    // Sparse files of 2 GiB and 4 GiB + 8: a few MiB of data each.
    for (name, kind, failing) in [
        ("size32", "offsets_32", &[(4u64 << 30) + 8][..]),
        ("one_call", "one_call", &[2u64 << 30, (4u64 << 30) + 8][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let Some(exe) = reader(dir.path(), name) else {
            return;
        };
        let out = ioscope()
            .args(["grade", "--json", "--big", "--runs", "1", "--dir"])
            .arg(dir.path())
            .arg("--")
            .arg(&exe)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        if let Some(why) = doc["skipped"].as_array().unwrap().first() {
            eprintln!("skipped: {why}");
            return;
        }
        only_these_fail(&doc, |s| failing.contains(&s), "wrong");
        assert_eq!(kinds(&doc), [kind], "{name}");
        assert!(
            doc["sizes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["size"].as_u64().unwrap() >= 2 << 30)
                .all(|s| s["sparse"] == true)
        );
    }
}

/// `sh -c SCRIPT sh {}` with `$R` the reader `name`: a reader wrapped in what it prints.
fn wrapped(name: &str, script: &str) -> Option<(i32, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let exe = reader(dir.path(), name)?;
    let script = format!("R={}; {script}", exe.display());
    Some(grade(dir.path(), &[], &["sh", "-c", &script, "sh", "{}"]))
}

#[test]
fn a_size_on_the_xor_s_line_and_a_long_log_before_the_answer_do_not_hide_it() {
    // "Computing XOR of N bytes..." then the answer; 70 KB of log first.
    let Some((code, doc)) = wrapped(
        "correct",
        r#"seq 1 12000 | sed 's/^/read block /'; echo "Computing XOR of $(wc -c < "$1") bytes..."; exec "$R" "$1""#,
    ) else {
        return;
    };
    assert_eq!(code, 0, "{doc:#}");
}

#[test]
fn a_time_printed_beside_a_wrong_xor_is_neither_the_answer_nor_a_race() {
    let Some((_, doc)) = wrapped(
        "drops_tail",
        r#"x=$("$R" "$1" | tr -dc '0-9a-f'); echo "XOR: $x (took 0.$(date +%N) s)""#,
    ) else {
        return;
    };
    only_these_fail(&doc, |s| s % 4 != 0, "wrong");
    assert_eq!(kinds(&doc), ["drops_tail"], "{doc:#}");
}

#[test]
fn the_file_s_name_in_the_output_is_not_taken_for_the_xor() {
    // The empty file's XOR is 0, and the scratch file's name holds a 0.
    let Some((_, doc)) = wrapped("correct", r#"echo "XOR of $1: deadbeef""#) else {
        return;
    };
    only_these_fail(&doc, |_| true, "wrong");
    assert_eq!(doc["sizes"][1]["runs"][0]["printed"], "deadbeef");
}

#[test]
fn an_xor_printed_in_colour_is_read() {
    let Some((code, doc)) = wrapped(
        "correct",
        r#"x=$("$R" "$1" | sed 's/.*: //'); printf 'XOR: \033[1;32m%s\033[0m\n' "$x""#,
    ) else {
        return;
    };
    assert_eq!(code, 0, "{doc:#}");
}

#[test]
fn statuses_and_signals_that_differ_by_size_are_each_named() {
    let Some((_, doc)) = wrapped(
        "correct",
        r#""$R" "$1"; if [ "$(wc -c < "$1")" -lt 5000 ]; then exit 3; else exit 2; fi"#,
    ) else {
        return;
    };
    let sentence = doc["diagnoses"][0]["sentence"].as_str().unwrap();
    assert!(
        sentence.contains("with status 3 on 0 B")
            && sentence.contains("with status 2 on 1 MiB + 2"),
        "{sentence}"
    );
}

#[test]
fn the_right_xor_printed_in_decimal_is_named() {
    let Some((_, doc)) = wrapped(
        "correct",
        r#"x=$("$R" "$1" | sed 's/.*: //'); printf 'XOR: %u\n' "0x$x""#,
    ) else {
        return;
    };
    only_these_fail(&doc, |s| s > 0, "wrong");
    assert_eq!(kinds(&doc), ["decimal"], "{doc:#}");
}
