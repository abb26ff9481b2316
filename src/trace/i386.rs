//! System calls made through the 32-bit ABI of an x86_64 kernel (`int $0x80`, a 32-bit
//! program, or a 64-bit one that uses the instruction): PTRACE_GET_SYSCALL_INFO reports
//! them with the architecture AUDIT_ARCH_I386, and their numbers mean other calls than the
//! same numbers of x86_64 (3 is `read` here, `close` there). The calls trace counts are
//! mapped to their 64-bit equivalents, with their arguments brought to the 64-bit layout
//! (32-bit values, offsets split in two halves joined); those whose arguments cannot be
//! (`_llseek` returns its offset through memory; the old `mmap` takes a struct; libaio's
//! arrays hold 32-bit pointers) are named as not counted. Never read as 64-bit numbers.
//!
//! The numbers are those of the kernel's `arch/x86/entry/syscalls/syscall_32.tbl`.

use super::call::Call;
use std::collections::BTreeMap;

/// `AUDIT_ARCH_I386`: the architecture PTRACE_GET_SYSCALL_INFO gives a 32-bit call.
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;

/// The bit an x32 call (a 64-bit program using 32-bit pointers) sets in its number: such
/// calls are counted, never decoded ([`Seen::x32`]).
pub const X32_BIT: u64 = 0x4000_0000;

/// What a 32-bit system call is to the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compat {
    /// Counted as this 64-bit call (its arguments brought to that layout by [`args`]).
    Counted(Call),
    /// A file-I/O call trace would count, whose arguments it cannot read here: named.
    Unseen(&'static str),
}

/// The 32-bit call numbered `nr`, if it is one trace counts or names.
pub fn call(nr: u64) -> Option<Compat> {
    use Call::*;
    use Compat::{Counted, Unseen};
    Some(match nr {
        3 => Counted(Read),
        4 => Counted(Write),
        5 => Counted(Open),
        6 => Counted(Close),
        8 => Counted(Creat),
        13 => Counted(Time),
        19 => Counted(Lseek),
        36 => Counted(Sync),
        41 => Counted(Dup),
        55 | 221 => Counted(Fcntl),
        63 => Counted(Dup2),
        78 => Counted(Gettimeofday),
        91 => Counted(Munmap),
        93 | 194 => Counted(Ftruncate),
        118 => Counted(Fsync),
        144 => Counted(Msync),
        145 => Counted(Readv),
        146 => Counted(Writev),
        148 => Counted(Fdatasync),
        180 => Counted(Pread),
        181 => Counted(Pwrite),
        187 | 239 => Counted(Sendfile),
        192 => Counted(Mmap),
        265 | 403 => Counted(ClockGettime),
        295 | 437 => Counted(Openat),
        313 => Counted(Splice),
        314 => Counted(SyncFileRange),
        324 => Counted(Fallocate),
        330 => Counted(Dup3),
        333 | 378 => Counted(Preadv),
        334 | 379 => Counted(Pwritev),
        344 => Counted(Syncfs),
        377 => Counted(CopyFileRange),
        426 => Counted(IoUringEnter),
        436 => Counted(CloseRange),
        90 => Unseen("mmap (old, i386)"),
        140 => Unseen("_llseek"),
        247 | 385 | 416 => Unseen("io_getevents"),
        248 => Unseen("io_submit"),
        _ => return None,
    })
}

/// The arguments of 32-bit call `nr` in the layout of its 64-bit equivalent: each a 32-bit
/// value (the kernel reads no more), and the offsets that i386 passes as two halves (low
/// first) joined where the 64-bit call has one (pread64, pwrite64, preadv and pwritev and
/// their "2" forms: the offset trace reads is argument 3).
pub fn args(nr: u64, raw: [u64; 6]) -> [u64; 6] {
    let mut a = raw.map(|v| v & 0xffff_ffff);
    if matches!(nr, 180 | 181 | 333 | 334 | 378 | 379) {
        a[3] |= a[4] << 32;
    }
    a
}

/// A 32-bit call's result as a 64-bit one: `-errno` stays negative; a value (an address
/// above 2 GiB from mmap2 included) stays positive.
pub fn ret(raw: u64, failed: bool) -> i64 {
    if failed {
        i64::from(raw as u32 as i32)
    } else {
        i64::from(raw as u32)
    }
}

/// The 32-bit calls of a trace: how many were counted, and those not counted, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Counted as their 64-bit equivalents.
    pub counted: u64,
    /// Not counted, by name (file-I/O calls whose arguments trace cannot read here, and,
    /// from another architecture than i386, every call).
    pub unseen: BTreeMap<String, u64>,
    /// x32 calls ([`X32_BIT`]): counted here, not decoded.
    pub x32: u64,
}

impl Seen {
    /// What the report says of `counted` calls counted as their 64-bit equivalents, if any.
    pub fn counted_sentence(counted: u64) -> Option<String> {
        (counted > 0).then(|| {
            format!(
                "{} system call(s) made through the 32-bit ABI (int 0x80) were counted as their 64-bit equivalents (by the kernel's i386 numbers)",
                crate::units::group_thousands(counted)
            )
        })
    }

    /// What the report says of the x32 calls, if any: how many, and that the totals leave
    /// them out.
    pub fn x32_sentence(&self) -> Option<String> {
        (self.x32 > 0).then(|| {
            format!(
                "x32: {} x32 calls not decoded: system calls made through the x32 ABI (numbers with bit 0x40000000) are counted here and left out of every table and total",
                crate::units::group_thousands(self.x32)
            )
        })
    }

    /// What the report says of those not counted, if any: how many, by name.
    pub fn unseen_sentence(&self) -> Option<String> {
        let total: u64 = self.unseen.values().sum();
        let names: Vec<String> = self
            .unseen
            .iter()
            .map(|(name, n)| format!("{name} ×{n}"))
            .collect();
        (total > 0).then(|| {
            format!(
                "32-bit: {total} system call(s) made through the 32-bit ABI (int 0x80) were not counted ({}): their arguments are not read in that ABI",
                names.join(", ")
            )
        })
    }
}

/// The call at an entry (or seccomp) stop, read in the ABI it was made through: `arch` as
/// PTRACE_GET_SYSCALL_INFO gives it, `native` this target's (0: unknown, every call read
/// as native). A counted call comes back with its arguments in the 64-bit layout; a 32-bit
/// call trace does not count is noted in `seen` when it is file I/O (every call of another
/// architecture is).
pub fn entered(
    arch: u32,
    native: u32,
    nr: u64,
    raw: [u64; 6],
    seen: &mut Seen,
) -> Option<(Call, [u64; 6])> {
    if arch == native && is_x32(nr) {
        seen.x32 += 1;
        return None;
    }
    if arch == native || native == 0 {
        return Call::of(nr).map(|c| (c, raw));
    }
    if cfg!(target_arch = "x86_64") && arch == AUDIT_ARCH_I386 {
        return match call(nr)? {
            Compat::Counted(c) => {
                seen.counted += 1;
                Some((c, args(nr, raw)))
            }
            Compat::Unseen(name) => {
                *seen.unseen.entry(name.to_string()).or_default() += 1;
                None
            }
        };
    }
    *seen
        .unseen
        .entry(format!("calls of architecture {arch:#x}"))
        .or_default() += 1;
    None
}

/// Whether native call number `nr` is an x32 call (x86_64 only).
pub fn is_x32(nr: u64) -> bool {
    cfg!(target_arch = "x86_64") && nr & X32_BIT != 0
}

/// The result at an exit stop, read in the ABI of the call (see [`entered`]).
pub fn result(arch: u32, native: u32, raw: u64, failed: bool) -> i64 {
    if cfg!(target_arch = "x86_64") && arch == AUDIT_ARCH_I386 && native != arch {
        ret(raw, failed)
    } else {
        raw as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_x32_call_is_counted_and_never_read_as_the_64_bit_call_of_its_number() {
        const X86_64: u32 = 0xc000_003e;
        let mut seen = Seen::default();
        // x32's read (0 | X32_BIT): not x86_64's read.
        let got = entered(X86_64, X86_64, X32_BIT, [0; 6], &mut seen);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(got, None);
            assert_eq!(seen.x32, 1);
            assert!(
                seen.x32_sentence()
                    .unwrap()
                    .contains("1 x32 calls not decoded")
            );
        }
        assert_eq!(Seen::default().x32_sentence(), None);
    }

    #[test]
    fn i386_numbers_mean_their_own_calls_not_the_64_bit_ones() {
        // 3 is read on i386 and close on x86_64; 6 is close and lstat; 118 fsync and
        // getresuid.
        assert_eq!(call(3), Some(Compat::Counted(Call::Read)));
        assert_eq!(call(4), Some(Compat::Counted(Call::Write)));
        assert_eq!(call(6), Some(Compat::Counted(Call::Close)));
        assert_eq!(call(118), Some(Compat::Counted(Call::Fsync)));
        assert_eq!(call(265), Some(Compat::Counted(Call::ClockGettime)));
        assert_eq!(call(140), Some(Compat::Unseen("_llseek")));
        // exit, getpid, brk: not file I/O.
        assert_eq!(call(1), None);
        assert_eq!(call(20), None);
        assert_eq!(call(45), None);
    }

    #[test]
    fn a_32_bit_call_is_never_read_as_the_64_bit_call_of_its_number() {
        const X86_64: u32 = 0xc000_003e;
        let mut seen = Seen::default();
        // i386 read(5, buf, 10): a read, not x86_64's close(5).
        let got = entered(
            AUDIT_ARCH_I386,
            X86_64,
            3,
            [5, 0x1000, 10, 0, 0, 0],
            &mut seen,
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(got, Some((Call::Read, [5, 0x1000, 10, 0, 0, 0])));
            assert_eq!(seen.counted, 1);
        }
        // i386 _llseek: named, not counted; i386 getpid: neither.
        assert_eq!(
            entered(AUDIT_ARCH_I386, X86_64, 140, [0; 6], &mut seen),
            None
        );
        assert_eq!(
            entered(AUDIT_ARCH_I386, X86_64, 20, [0; 6], &mut seen),
            None
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(seen.unseen["_llseek"], 1);
            assert_eq!(seen.unseen.len(), 1);
        }
        // A native call goes through the native table.
        let native = entered(X86_64, X86_64, libc::SYS_read as u64, [0; 6], &mut seen);
        assert_eq!(native.map(|n| n.0), Some(Call::Read));
        assert_eq!(
            result(AUDIT_ARCH_I386, X86_64, 0xffff_fff7, true),
            if cfg!(target_arch = "x86_64") {
                -9
            } else {
                0xffff_fff7
            }
        );
    }

    #[test]
    fn split_offsets_are_joined_and_values_keep_32_bits() {
        // pread64(fd, buf, count, low, high) with garbage above 32 bits in the registers.
        let a = args(180, [0xdead_0000_0003, 0x1000, 4096, 0x10, 0x2, 0]);
        assert_eq!(a, [3, 0x1000, 4096, (2 << 32) | 0x10, 2, 0]);
        // write keeps its arguments (32 bits each).
        assert_eq!(args(4, [1, 2, 3, 0, 0, 0]), [1, 2, 3, 0, 0, 0]);
        assert_eq!(ret(u64::from((-9i32) as u32), true), -9);
        assert_eq!(ret(12, false), 12);
        assert_eq!(ret(0xf7f0_0000, false), 0xf7f0_0000);
    }

    #[test]
    fn the_sentences_name_what_was_not_counted() {
        let mut s = Seen::default();
        assert_eq!(
            (Seen::counted_sentence(0), s.unseen_sentence()),
            (None, None)
        );
        s.counted = 4;
        s.unseen.insert("_llseek".into(), 2);
        let counted = Seen::counted_sentence(s.counted).unwrap();
        let unseen = s.unseen_sentence().unwrap();
        assert!(counted.starts_with("4 system call(s)"), "{counted}");
        assert!(
            unseen.contains("2 system call(s)") && unseen.contains("_llseek ×2"),
            "{unseen}"
        );
    }
}
