//! Hiding the vDSO from a traced program, so that its clock reads become system calls the
//! tracer sees. At the exec stop, before the new program runs, the `AT_SYSINFO_EHDR` entry
//! of the auxiliary vector on its initial stack is turned into `AT_IGNORE`: glibc, musl and
//! Go then find no vDSO and call `clock_gettime`, `gettimeofday` and `time` through the
//! kernel. The kernel's own copy (/proc/PID/auxv) is left alone and is used to check that
//! the entry found on the stack is the right one before anything is written.

/// What became of one program's vDSO at its exec stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hidden {
    /// Its `AT_SYSINFO_EHDR` entry now reads `AT_IGNORE`.
    Yes,
    /// The kernel gave it no vDSO (no `AT_SYSINFO_EHDR` in /proc/PID/auxv): nothing to hide.
    NoVdso,
    /// It could not be hidden; the reason, in a few words.
    Failed(String),
}

/// Bytes in a word of a 64-bit program; a 32-bit one (i386 on x86_64) has words of 4
/// bytes on its stack and in its /proc/PID/auxv, and is read with those ([`word_size`]).
const WORD64: usize = 8;
const WORD32: usize = 4;

/// How many words of argv and envp are looked through before giving up.
const MAX_WORDS: usize = 1 << 20;

/// The entry that points at the vDSO, and what it becomes.
const AT_SYSINFO_EHDR: u64 = libc::AT_SYSINFO_EHDR;
const AT_IGNORE: u64 = libc::AT_IGNORE;
const AT_NULL: u64 = libc::AT_NULL;

/// Hides the vDSO from task `pid`, which must be in its PTRACE_EVENT_EXEC stop.
pub fn hide(pid: i32) -> Hidden {
    match try_hide(pid) {
        Ok(true) => Hidden::Yes,
        Ok(false) => Hidden::NoVdso,
        Err(why) => Hidden::Failed(why),
    }
}

/// The word size of the program task `pid` runs: from the ELF class of /proc/PID/exe
/// (4 for ELFCLASS32, 8 otherwise).
fn word_size(pid: i32) -> Result<usize, String> {
    use std::io::Read;
    let mut head = [0u8; 5];
    std::fs::File::open(format!("/proc/{pid}/exe"))
        .and_then(|mut f| f.read_exact(&mut head))
        .map_err(|e| format!("read /proc/{pid}/exe's ELF header: {e}"))?;
    Ok(if head[..4] == *b"\x7fELF" && head[4] == 1 {
        WORD32
    } else {
        WORD64
    })
}

fn try_hide(pid: i32) -> Result<bool, String> {
    let word = word_size(pid)?;
    let saved = std::fs::read(format!("/proc/{pid}/auxv"))
        .map_err(|e| format!("read /proc/{pid}/auxv: {e}"))?;
    let pairs = words(&saved, word);
    let Some(index) = pairs
        .chunks_exact(2)
        .take_while(|p| p[0] != AT_NULL)
        .position(|p| p[0] == AT_SYSINFO_EHDR)
    else {
        return Ok(false);
    };
    let mem = std::fs::File::open(format!("/proc/{pid}/mem"))
        .map_err(|e| format!("open /proc/{pid}/mem: {e}"))?;
    let sp = stack_pointer(pid).ok_or("no stack pointer at the exec stop")?;
    let auxv = auxv_address(&mem, sp, word)?;
    // The vector on the stack must be the kernel's copy, word for word, up to AT_NULL.
    let length = pairs
        .chunks_exact(2)
        .position(|p| p[0] == AT_NULL)
        .map_or(pairs.len(), |n| (n + 1) * 2);
    let mut on_stack = vec![0u8; length * word];
    read_exact_at(&mem, &mut on_stack, auxv)?;
    if words(&on_stack, word) != pairs[..length] {
        return Err("the auxiliary vector on the stack differs from /proc's copy".into());
    }
    let entry = auxv + (index * 2 * word) as u64;
    // A 32-bit program's entry is half a 64-bit word: the word is read and only its
    // entry's half replaced (x86 is little-endian: the entry is the low half).
    let value = if word == WORD32 {
        let mut whole = [0u8; WORD64];
        read_exact_at(&mem, &mut whole, entry)?;
        (u64::from_ne_bytes(whole) & !0xffff_ffff) | AT_IGNORE
    } else {
        AT_IGNORE
    };
    // SAFETY: PTRACE_POKEDATA writes one word at an address of the stopped tracee; no
    // memory of ours is touched.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_POKEDATA,
            pid,
            entry as usize as *mut libc::c_void,
            value as usize as *mut libc::c_void,
        )
    };
    if r != 0 {
        return Err(format!(
            "write its auxiliary vector: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(true)
}

/// Native-endian words of `word` bytes (4 or 8) of `bytes`, widened; a trailing partial
/// word is dropped.
fn words(bytes: &[u8], word: usize) -> Vec<u64> {
    bytes
        .chunks_exact(word)
        .map(|w| {
            if word == WORD32 {
                u64::from(u32::from_ne_bytes(
                    w.try_into().expect("chunks of one word"),
                ))
            } else {
                u64::from_ne_bytes(w.try_into().expect("chunks of one word"))
            }
        })
        .collect()
}

fn read_exact_at(mem: &std::fs::File, buf: &mut [u8], at: u64) -> Result<(), String> {
    use std::os::unix::fs::FileExt;
    mem.read_exact_at(buf, at)
        .map_err(|e| format!("read its stack at {at:#x}: {e}"))
}

/// Where the auxiliary vector starts: after argc, argv[argc] and NULL, envp and NULL, in
/// words of `word` bytes.
fn auxv_address(mem: &std::fs::File, sp: u64, word: usize) -> Result<u64, String> {
    let mut first = vec![0u8; word];
    read_exact_at(mem, &mut first, sp)?;
    let argc = words(&first, word)[0];
    if argc > MAX_WORDS as u64 {
        return Err(format!(
            "argc {argc} at the stack pointer is not believable"
        ));
    }
    let mut at = sp + (argc + 2) * word as u64;
    // envp: scanned a chunk at a time up to its NULL; a read stops short at the top of the
    // stack's mapping, and what it returned is used.
    let mut scanned = 0usize;
    let mut chunk = vec![0u8; 512 * word];
    loop {
        use std::os::unix::fs::FileExt;
        let n = mem
            .read_at(&mut chunk, at)
            .map_err(|e| format!("read its stack at {at:#x}: {e}"))?;
        let got = words(&chunk[..n], word);
        if got.is_empty() {
            return Err("no end of the environment on the stack".into());
        }
        if let Some(k) = got.iter().position(|&w| w == 0) {
            return Ok(at + ((k + 1) * word) as u64);
        }
        at += (got.len() * word) as u64;
        scanned += got.len();
        if scanned > MAX_WORDS {
            return Err("no end of the environment on the stack".into());
        }
    }
}

/// `struct ptrace_syscall_info`'s head: the stack pointer is filled at any ptrace stop.
#[repr(C)]
#[derive(Default)]
struct InfoHead {
    _op: u8,
    _reserved: u8,
    _flags: u16,
    _arch: u32,
    _ip: u64,
    sp: u64,
}

/// The stack pointer of stopped task `pid` (PTRACE_GET_SYSCALL_INFO, Linux 5.3+).
fn stack_pointer(pid: i32) -> Option<u64> {
    let mut head = InfoHead::default();
    // SAFETY: the kernel writes at most the size we pass into a live local of that size.
    let got = unsafe {
        libc::ptrace(
            libc::PTRACE_GET_SYSCALL_INFO,
            pid,
            std::mem::size_of::<InfoHead>() as *mut libc::c_void,
            &mut head as *mut InfoHead as *mut libc::c_void,
        )
    };
    (got > 0 && head.sp != 0).then_some(head.sp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_read_in_native_order_and_a_partial_tail_is_dropped() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&33u64.to_ne_bytes());
        bytes.extend_from_slice(&0x7fff_0000u64.to_ne_bytes());
        bytes.extend_from_slice(&[1, 2, 3]);
        assert_eq!(words(&bytes, WORD64), vec![33, 0x7fff_0000]);
    }

    #[test]
    fn a_32_bit_program_has_words_of_four_bytes() {
        // An i386 auxv: (AT_SYSINFO_EHDR 33, 0xf7f00000), (AT_NULL, 0).
        let mut bytes = Vec::new();
        for w in [33u32, 0xf7f0_0000, 0, 0] {
            bytes.extend_from_slice(&w.to_ne_bytes());
        }
        assert_eq!(words(&bytes, WORD32), vec![33, 0xf7f0_0000, 0, 0]);
        // Read as 64-bit words it would be two words, neither of them 33.
        assert!(!words(&bytes, WORD64).contains(&33));
    }
}
