//! libaio's requests and completions read inside the kernel, at the call: small eBPF
//! programs, assembled here (no compiler, no library, no object file), loaded with
//! `bpf(2)` and attached by the kernel engine to the `syscalls:` tracepoints of
//! `io_submit`, `io_getevents` and `io_pgetevents`. Without them the engine must stop the
//! program at each of those calls (ptrace) to read its iocbs before it reuses them, three
//! stops per request for fio's libaio at depth 16; with them the program never stops.
//!
//! The programs run for every process on the machine, so they first ask whether the
//! calling process is one of the traced command's: a hash map of process ids, seeded with
//! the command's first task and grown by a program on `task:task_newtask` (every task a
//! traced process creates). What they read leaves the kernel as one record per call
//! through a `BPF_OUTPUT` event per CPU whose records go into that CPU's ring, beside the
//! tracepoints' records (see [`Record`] for the layout). Every program returns 1, so that
//! any other user of the same tracepoints keeps its records.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The first bytes of a record written here: a tracepoint's own records start with their
/// type, which the kernel never makes this (its largest is 65,534).
pub const MARK: u16 = 0xffff;
/// The record of an `io_submit`: [`Record::Submit`].
const KIND_SUBMIT: u64 = 1;
/// The record of an `io_getevents` or `io_pgetevents`: [`Record::Events`].
const KIND_EVENTS: u64 = 2;
/// The most requests of one `io_submit` read in the kernel (the rest are read from the
/// program's memory afterwards, as without these programs).
pub const MOST_IOCBS: u64 = 128;
/// The most completions of one `io_getevents` read in the kernel.
pub const MOST_EVENTS: u64 = 128;
const IOCB: u64 = super::tally::aio::IOCB_SIZE as u64;
const EVENT: u64 = super::tally::aio::EVENT_SIZE as u64;
/// A request as read: its pointer, then the iocb.
const ENTRY: u64 = 8 + IOCB;
/// The header of every record: tag, address, a count asked or returned, a count read.
const HEADER: u64 = 32;
/// The per-CPU room a record is built in.
const SCRATCH: u64 = HEADER + MOST_IOCBS * ENTRY;

/// Where a tracepoint's fields are that the programs read (offsets in its record, as its
/// `format` file gives them; the programs' context starts at the record).
#[derive(Debug, Clone, Copy)]
pub struct Offsets {
    /// `syscalls:sys_enter_io_submit`: `nr`.
    pub submit_nr: i16,
    /// `syscalls:sys_enter_io_submit`: `iocbpp`.
    pub submit_array: i16,
    /// `syscalls:sys_enter_io_getevents` (and `io_pgetevents`): `events`.
    pub events: i16,
    /// `syscalls:sys_exit_*`: `ret`.
    pub ret: i16,
    /// `task:task_newtask`: `pid`.
    pub new_pid: i16,
}

/// The maps and the loaded programs; closed (detached, freed) when dropped.
pub struct Loaded {
    /// Process ids of the traced command (hash, u32 → u32).
    tgids: OwnedFd,
    /// Per CPU, the `BPF_OUTPUT` event records go to (perf event array).
    out: OwnedFd,
    /// `io_submit`'s program, at its enter.
    pub submit: OwnedFd,
    /// `io_getevents`' program at its enter: where the events go.
    pub events_enter: OwnedFd,
    /// `io_getevents`' program at its exit: the events.
    pub events_exit: OwnedFd,
    /// `task_newtask`'s program: a traced process's new tasks are traced.
    pub newtask: OwnedFd,
    /// Kept open while the programs use them.
    _waiting: OwnedFd,
    _scratch: OwnedFd,
}

/// What one record written by the programs says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// An `io_submit` given `asked` requests at `array`: the pointers and iocbs of the
    /// first ones read, as (address, bytes) regions.
    Submit {
        /// Where the pointers are.
        array: u64,
        /// How many requests the call was given.
        asked: u64,
        /// What was read: each iocb at its address, then the pointers at `array`.
        regions: Vec<(u64, Vec<u8>)>,
    },
    /// An `io_getevents` that returned `ret`: the events it filled at `at`, if read.
    Events {
        /// Where the events go.
        at: u64,
        /// What the call returned.
        ret: i64,
        /// The events, at `at` (none when it returned none or they could not be read).
        regions: Vec<(u64, Vec<u8>)>,
    },
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl Record {
    /// Decodes the raw data of a record the programs wrote (`None`: another record, or
    /// one cut short).
    pub fn decode(raw: &[u8]) -> Option<Record> {
        let tag = u64_at(raw, 0)?;
        if tag & 0xffff != MARK as u64 {
            return None;
        }
        let (at, asked, n) = (u64_at(raw, 8)?, u64_at(raw, 16)?, u64_at(raw, 24)?);
        let body = &raw[HEADER as usize..];
        match tag >> 16 {
            KIND_SUBMIT => {
                let n = n.min(MOST_IOCBS) as usize;
                if body.len() < n * ENTRY as usize {
                    return None;
                }
                let mut pointers = Vec::with_capacity(n * 8);
                let mut regions = Vec::with_capacity(n + 1);
                for e in body.chunks_exact(ENTRY as usize).take(n) {
                    pointers.extend_from_slice(&e[..8]);
                    regions.push((u64_at(e, 0)?, e[8..].to_vec()));
                }
                if !pointers.is_empty() {
                    regions.push((at, pointers));
                }
                Some(Record::Submit {
                    array: at,
                    asked,
                    regions,
                })
            }
            KIND_EVENTS => {
                let len = (n.min(MOST_EVENTS) * EVENT) as usize;
                let bytes = body.get(..len)?;
                let regions = if len > 0 {
                    vec![(at, bytes.to_vec())]
                } else {
                    Vec::new()
                };
                Some(Record::Events {
                    at,
                    ret: asked as i64,
                    regions,
                })
            }
            _ => None,
        }
    }
}

// ---- bpf(2) ----

const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_UPDATE_ELEM: i32 = 2;
const BPF_PROG_LOAD: i32 = 5;
const MAP_HASH: u32 = 1;
const MAP_PERF_EVENT_ARRAY: u32 = 4;
const MAP_PERCPU_ARRAY: u32 = 6;
const PROG_TRACEPOINT: u32 = 5;

#[repr(C)]
#[derive(Default)]
struct MapAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
}

#[repr(C)]
#[derive(Default)]
struct ElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct ProgAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
}

fn bpf<T>(cmd: i32, attr: &mut T) -> std::io::Result<i64> {
    // SAFETY: `attr` is a live, fully initialised bpf_attr prefix of the size passed;
    // the kernel reads it (and for a load, writes the log where it points).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut T,
            std::mem::size_of::<T>() as u32,
        )
    };
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn owned(fd: i64) -> OwnedFd {
    // SAFETY: a descriptor the kernel just returned to us, owned by nothing else.
    unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
}

fn map(kind: u32, key: u32, value: u32, entries: u32) -> std::io::Result<OwnedFd> {
    let mut a = MapAttr {
        map_type: kind,
        key_size: key,
        value_size: value,
        max_entries: entries,
        map_flags: 0,
    };
    bpf(BPF_MAP_CREATE, &mut a).map(owned)
}

fn update(map: &OwnedFd, key: &[u8], value: &[u8]) -> std::io::Result<()> {
    let mut a = ElemAttr {
        map_fd: map.as_raw_fd() as u32,
        key: key.as_ptr() as u64,
        value: value.as_ptr() as u64,
        ..ElemAttr::default()
    };
    bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
}

/// Loads `program`; the verifier's last words when it refuses it.
fn load(program: &[Insn], name: &str) -> Result<OwnedFd, String> {
    let license = c"Dual MIT/GPL";
    let mut log = vec![0u8; 1 << 16];
    let mut prog_name = [0u8; 16];
    for (d, s) in prog_name.iter_mut().zip(name.bytes().take(15)) {
        *d = s;
    }
    let mut a = ProgAttr {
        prog_type: PROG_TRACEPOINT,
        insn_cnt: program.len() as u32,
        insns: program.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 0,
        log_size: 0,
        log_buf: 0,
        prog_name,
        ..ProgAttr::default()
    };
    match bpf(BPF_PROG_LOAD, &mut a) {
        Ok(fd) => Ok(owned(fd)),
        Err(first) => {
            // Again with the verifier's log, to say why.
            a.log_level = 1;
            a.log_size = log.len() as u32;
            a.log_buf = log.as_mut_ptr() as u64;
            let _ = bpf(BPF_PROG_LOAD, &mut a);
            let text = String::from_utf8_lossy(&log);
            let last = text
                .trim_end_matches('\0')
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty() && !l.starts_with("processed"))
                .unwrap_or("")
                .to_string();
            Err(format!(
                "the kernel refused the eBPF program {name} ({first}){}",
                if last.is_empty() {
                    String::new()
                } else {
                    format!(": {last}")
                }
            ))
        }
    }
}

impl Loaded {
    /// Makes the maps and loads the programs; `cpus` is the size of the per-CPU array.
    pub fn load(offsets: Offsets, cpus: u32) -> Result<Loaded, String> {
        let refused = |what: &str, e: std::io::Error| format!("the kernel refused {what} ({e})");
        let tgids = map(MAP_HASH, 4, 4, 1 << 16).map_err(|e| refused("an eBPF hash map", e))?;
        let waiting = map(MAP_HASH, 8, 8, 1 << 16).map_err(|e| refused("an eBPF hash map", e))?;
        let scratch = map(MAP_PERCPU_ARRAY, 4, SCRATCH as u32, 1)
            .map_err(|e| refused("an eBPF per-CPU array", e))?;
        let out = map(MAP_PERF_EVENT_ARRAY, 4, 4, cpus.max(1))
            .map_err(|e| refused("an eBPF perf event array", e))?;
        let fds = Fds {
            tgids: tgids.as_raw_fd(),
            waiting: waiting.as_raw_fd(),
            scratch: scratch.as_raw_fd(),
            out: out.as_raw_fd(),
        };
        Ok(Loaded {
            submit: load(&submit(offsets, fds), "ioscope_submit")?,
            events_enter: load(&events_enter(offsets, fds), "ioscope_ev_in")?,
            events_exit: load(&events_exit(offsets, fds), "ioscope_ev_out")?,
            newtask: load(&newtask(offsets, fds), "ioscope_newtask")?,
            tgids,
            out,
            _waiting: waiting,
            _scratch: scratch,
        })
    }

    /// Traces process `pid` (and what it starts, once running).
    pub fn follow(&self, pid: i32) -> std::io::Result<()> {
        update(
            &self.tgids,
            &(pid as u32).to_ne_bytes(),
            &1u32.to_ne_bytes(),
        )
    }

    /// Sends CPU `cpu`'s records to `event` (a `BPF_OUTPUT` perf event on that CPU).
    pub fn output(&self, cpu: u32, event: RawFd) -> std::io::Result<()> {
        update(&self.out, &cpu.to_ne_bytes(), &(event as u32).to_ne_bytes())
    }
}

// ---- the programs ----

/// One instruction, as the kernel reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

/// The maps' descriptors, as the programs name them.
#[derive(Clone, Copy)]
struct Fds {
    tgids: RawFd,
    waiting: RawFd,
    scratch: RawFd,
    out: RawFd,
}

// Registers: R0 a helper's result, R1..R5 its arguments, R6..R9 kept across calls, R10
// the frame.
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R5: u8 = 5;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;
const R9: u8 = 9;
const FP: u8 = 10;

const HELPER_LOOKUP: i32 = 1;
const HELPER_UPDATE: i32 = 2;
const HELPER_DELETE: i32 = 3;
const HELPER_PID_TGID: i32 = 14;
const HELPER_OUTPUT: i32 = 25;
const HELPER_READ_USER: i32 = 112;

// Opcodes: class | size or op | source.
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const ST: u8 = 0x02;
const STX: u8 = 0x03;
const JMP: u8 = 0x05;
const ALU64: u8 = 0x07;
const ALU32: u8 = 0x04;
const W: u8 = 0x00;
const DW: u8 = 0x18;
const MEM: u8 = 0x60;
const IMM: u8 = 0x00;
const K: u8 = 0x00;
const X: u8 = 0x08;
const ADD: u8 = 0x00;
const MUL: u8 = 0x20;
const LSH: u8 = 0x60;
const RSH: u8 = 0x70;
const MOV: u8 = 0xb0;
const JEQ: u8 = 0x10;
const JGE: u8 = 0x30;
const JNE: u8 = 0x50;
const JSLE: u8 = 0xd0;
const JLT: u8 = 0xa0;
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;

/// A program being written, with jumps to labels resolved at the end.
#[derive(Default)]
struct Asm {
    code: Vec<Insn>,
    labels: Vec<Option<usize>>,
    /// (instruction, label) of each jump.
    jumps: Vec<(usize, usize)>,
}

#[derive(Clone, Copy)]
struct Label(usize);

impl Asm {
    fn raw(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) -> &mut Self {
        self.code.push(Insn {
            code,
            regs: dst | (src << 4),
            off,
            imm,
        });
        self
    }
    fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }
    fn here(&mut self, l: Label) -> &mut Self {
        self.labels[l.0] = Some(self.code.len());
        self
    }
    fn mov(&mut self, dst: u8, src: u8) -> &mut Self {
        self.raw(ALU64 | MOV | X, dst, src, 0, 0)
    }
    fn movi(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(ALU64 | MOV | K, dst, 0, 0, imm)
    }
    /// `dst = (u32) imm`: the upper half zero (BPF_F_CURRENT_CPU is 0xffffffff).
    fn movi32(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(ALU32 | MOV | K, dst, 0, 0, imm)
    }
    fn addi(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(ALU64 | ADD | K, dst, 0, 0, imm)
    }
    fn add(&mut self, dst: u8, src: u8) -> &mut Self {
        self.raw(ALU64 | ADD | X, dst, src, 0, 0)
    }
    fn muli(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(ALU64 | MUL | K, dst, 0, 0, imm)
    }
    fn lshi(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(ALU64 | LSH | K, dst, 0, 0, imm)
    }
    fn rshi(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(ALU64 | RSH | K, dst, 0, 0, imm)
    }
    /// `dst = *(u64 *)(src + off)`.
    fn ldx(&mut self, dst: u8, src: u8, off: i16) -> &mut Self {
        self.raw(LDX | MEM | DW, dst, src, off, 0)
    }
    /// `*(u64 *)(dst + off) = src`.
    fn stx(&mut self, dst: u8, off: i16, src: u8) -> &mut Self {
        self.raw(STX | MEM | DW, dst, src, off, 0)
    }
    /// `*(u32 *)(dst + off) = src`.
    fn stx32(&mut self, dst: u8, off: i16, src: u8) -> &mut Self {
        self.raw(STX | MEM | W, dst, src, off, 0)
    }
    /// `*(u32 *)(dst + off) = imm`.
    fn st32(&mut self, dst: u8, off: i16, imm: i32) -> &mut Self {
        self.raw(ST | MEM | W, dst, 0, off, imm)
    }
    /// `dst = map` (a map's descriptor, which the kernel turns into the map).
    fn map(&mut self, dst: u8, fd: RawFd) -> &mut Self {
        // BPF_LD | BPF_DW | BPF_IMM with src BPF_PSEUDO_MAP_FD (1), two slots.
        self.raw(LD | DW | IMM, dst, 1, 0, fd);
        self.raw(0, 0, 0, 0, 0)
    }
    fn call(&mut self, helper: i32) -> &mut Self {
        self.raw(JMP | CALL, 0, 0, 0, helper)
    }
    fn exit(&mut self) -> &mut Self {
        self.raw(JMP | EXIT, 0, 0, 0, 0)
    }
    /// `if dst <op> imm goto to`.
    fn jmpi(&mut self, op: u8, dst: u8, imm: i32, to: Label) -> &mut Self {
        self.jumps.push((self.code.len(), to.0));
        self.raw(JMP | op | K, dst, 0, 0, imm)
    }
    /// `if dst <op> src goto to`.
    fn jmp(&mut self, op: u8, dst: u8, src: u8, to: Label) -> &mut Self {
        self.jumps.push((self.code.len(), to.0));
        self.raw(JMP | op | X, dst, src, 0, 0)
    }
    /// `dst` = this process's entry in the traced map, or 0 (R1..R5 clobbered).
    fn traced(&mut self, fds: Fds, not: Label) -> &mut Self {
        self.call(HELPER_PID_TGID)
            .rshi(R0, 32)
            .stx32(FP, -4, R0)
            .mov(R2, FP)
            .addi(R2, -4)
            .map(R1, fds.tgids)
            .call(HELPER_LOOKUP)
            .jmpi(JEQ, R0, 0, not)
    }
    /// R7 = this CPU's scratch room, or to `not`.
    fn scratch(&mut self, fds: Fds, not: Label) -> &mut Self {
        self.st32(FP, -8, 0)
            .mov(R2, FP)
            .addi(R2, -8)
            .map(R1, fds.scratch)
            .call(HELPER_LOOKUP)
            .jmpi(JEQ, R0, 0, not)
            .mov(R7, R0)
    }
    /// Writes the record at R7, of R5 bytes, to this CPU's output event.
    fn output(&mut self, fds: Fds) -> &mut Self {
        self.mov(R4, R7)
            .movi32(R3, -1)
            .map(R2, fds.out)
            .mov(R1, R6)
            .call(HELPER_OUTPUT)
    }
    fn done(mut self) -> Vec<Insn> {
        for &(at, label) in &self.jumps {
            let to = self.labels[label].expect("every label placed");
            self.code[at].off = (to as i64 - at as i64 - 1) as i16;
        }
        self.code
    }
}

/// At `io_submit`'s enter: the pointers and iocbs of its first requests, one record.
fn submit(o: Offsets, fds: Fds) -> Vec<Insn> {
    let mut a = Asm::default();
    let (out, done, top) = (a.label(), a.label(), a.label());
    a.mov(R6, R1).traced(fds, out).scratch(fds, out);
    a.movi(R1, (KIND_SUBMIT << 16 | MARK as u64) as i32)
        .stx(R7, 0, R1)
        .ldx(R8, R6, o.submit_array)
        .stx(R7, 8, R8)
        .ldx(R1, R6, o.submit_nr)
        .stx(R7, 16, R1)
        .movi(R9, 0)
        .jmpi(JSLE, R1, 0, done);
    let keep = a.label();
    a.jmpi(JSLE, R1, MOST_IOCBS as i32, keep)
        .movi(R1, MOST_IOCBS as i32)
        .here(keep)
        .stx(FP, -16, R1);
    // Entry i at R7 + HEADER + i * ENTRY: its pointer, read from the array, then its iocb.
    a.here(top)
        .mov(R1, R9)
        .muli(R1, ENTRY as i32)
        .addi(R1, HEADER as i32)
        .mov(R2, R7)
        .add(R2, R1)
        .mov(R1, R2)
        .mov(R3, R9)
        .lshi(R3, 3)
        .add(R3, R8)
        .movi(R2, 8)
        .call(HELPER_READ_USER)
        .jmpi(JNE, R0, 0, done)
        .mov(R1, R9)
        .muli(R1, ENTRY as i32)
        .addi(R1, HEADER as i32)
        .mov(R2, R7)
        .add(R2, R1)
        .mov(R1, R2)
        .ldx(R3, R1, 0)
        .addi(R1, 8)
        .movi(R2, IOCB as i32)
        .call(HELPER_READ_USER)
        .jmpi(JNE, R0, 0, done)
        .addi(R9, 1)
        .ldx(R1, FP, -16)
        .jmp(JGE, R9, R1, done)
        .jmpi(JLT, R9, MOST_IOCBS as i32, top);
    a.here(done)
        .stx(R7, 24, R9)
        .mov(R5, R9)
        .muli(R5, ENTRY as i32)
        .addi(R5, HEADER as i32)
        .output(fds);
    a.here(out).movi(R0, 1).exit();
    a.done()
}

/// At `io_getevents`' enter: where its events go, kept by task until its exit.
fn events_enter(o: Offsets, fds: Fds) -> Vec<Insn> {
    let mut a = Asm::default();
    let out = a.label();
    a.mov(R6, R1)
        .call(HELPER_PID_TGID)
        .mov(R7, R0)
        .traced(fds, out)
        .stx(FP, -16, R7)
        .ldx(R1, R6, o.events)
        .stx(FP, -24, R1)
        .map(R1, fds.waiting)
        .mov(R2, FP)
        .addi(R2, -16)
        .mov(R3, FP)
        .addi(R3, -24)
        .movi(R4, 0)
        .call(HELPER_UPDATE);
    a.here(out).movi(R0, 1).exit();
    a.done()
}

/// At `io_getevents`' exit: the events it filled, one record (with none when it filled
/// none or they could not be read, so that every call has its record).
fn events_exit(o: Offsets, fds: Fds) -> Vec<Insn> {
    let mut a = Asm::default();
    let (out, send, keep, read) = (a.label(), a.label(), a.label(), a.label());
    a.mov(R6, R1)
        .call(HELPER_PID_TGID)
        .stx(FP, -16, R0)
        .map(R1, fds.waiting)
        .mov(R2, FP)
        .addi(R2, -16)
        .call(HELPER_LOOKUP)
        .jmpi(JEQ, R0, 0, out)
        .ldx(R8, R0, 0)
        .map(R1, fds.waiting)
        .mov(R2, FP)
        .addi(R2, -16)
        .call(HELPER_DELETE)
        .scratch(fds, out)
        .movi(R1, (KIND_EVENTS << 16 | MARK as u64) as i32)
        .stx(R7, 0, R1)
        .stx(R7, 8, R8)
        .ldx(R9, R6, o.ret)
        .stx(R7, 16, R9)
        .jmpi(JSLE, R9, 0, read)
        .jmpi(JSLE, R9, MOST_EVENTS as i32, keep)
        .movi(R9, MOST_EVENTS as i32)
        .here(keep)
        .mov(R2, R9)
        .lshi(R2, 5)
        .mov(R1, R7)
        .addi(R1, HEADER as i32)
        .mov(R3, R8)
        .call(HELPER_READ_USER)
        .jmpi(JEQ, R0, 0, send)
        .here(read)
        .movi(R9, 0)
        .here(send)
        .stx(R7, 24, R9)
        .mov(R5, R9)
        .lshi(R5, 5)
        .addi(R5, HEADER as i32)
        .output(fds);
    a.here(out).movi(R0, 1).exit();
    a.done()
}

/// At `task_newtask` (run by the task creating it): a traced process's new task is traced.
fn newtask(o: Offsets, fds: Fds) -> Vec<Insn> {
    let mut a = Asm::default();
    let out = a.label();
    a.mov(R6, R1).traced(fds, out);
    a.raw(LDX | MEM | W, R1, R6, o.new_pid, 0)
        .stx32(FP, -8, R1)
        .st32(FP, -12, 1)
        .map(R1, fds.tgids)
        .mov(R2, FP)
        .addi(R2, -8)
        .mov(R3, FP)
        .addi(R3, -12)
        .movi(R4, 0)
        .call(HELPER_UPDATE);
    a.here(out).movi(R0, 1).exit();
    a.done()
}

/// Whether this process sees the machine's own process ids (the initial pid namespace):
/// the programs compare the kernel's ids, the records carry ours.
pub fn initial_pid_namespace() -> bool {
    use std::os::unix::fs::MetadataExt;
    // PROC_PID_INIT_INO.
    std::fs::metadata("/proc/self/ns/pid").is_ok_and(|m| m.ino() == 0xEFFF_FFFC)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets() -> Offsets {
        Offsets {
            submit_nr: 24,
            submit_array: 32,
            events: 40,
            ret: 16,
            new_pid: 8,
        }
    }

    fn fds() -> Fds {
        Fds {
            tgids: 3,
            waiting: 4,
            scratch: 5,
            out: 6,
        }
    }

    #[test]
    fn every_jump_lands_inside_its_program_and_every_program_ends_in_exit() {
        for p in [
            submit(offsets(), fds()),
            events_enter(offsets(), fds()),
            events_exit(offsets(), fds()),
            newtask(offsets(), fds()),
        ] {
            assert_eq!(p.last().map(|i| i.code), Some(JMP | EXIT));
            for (at, i) in p.iter().enumerate() {
                let class = i.code & 0x07;
                let op = i.code & 0xf0;
                if class == JMP && op != CALL && op != EXIT {
                    let to = at as i64 + 1 + i.off as i64;
                    assert!((0..p.len() as i64).contains(&to), "{at}: {i:?}");
                }
            }
        }
    }

    #[test]
    fn a_submit_record_gives_the_pointer_array_and_each_iocb() {
        let mut raw = Vec::new();
        raw.extend_from_slice(&(KIND_SUBMIT << 16 | MARK as u64).to_ne_bytes());
        raw.extend_from_slice(&0x1000u64.to_ne_bytes());
        raw.extend_from_slice(&3u64.to_ne_bytes());
        raw.extend_from_slice(&2u64.to_ne_bytes());
        for (p, fill) in [(0x2000u64, 7u8), (0x3000, 9)] {
            raw.extend_from_slice(&p.to_ne_bytes());
            raw.extend_from_slice(&[fill; IOCB as usize]);
        }
        raw.extend_from_slice(&[0; 4]); // the kernel's padding
        let Some(Record::Submit {
            array,
            asked,
            regions,
        }) = Record::decode(&raw)
        else {
            panic!("a submit record");
        };
        assert_eq!((array, asked), (0x1000, 3));
        assert_eq!(regions.len(), 3);
        assert_eq!(regions[0], (0x2000, vec![7; IOCB as usize]));
        assert_eq!(regions[1], (0x3000, vec![9; IOCB as usize]));
        let mut pointers = 0x2000u64.to_ne_bytes().to_vec();
        pointers.extend_from_slice(&0x3000u64.to_ne_bytes());
        assert_eq!(regions[2], (0x1000, pointers));
    }

    #[test]
    fn an_events_record_says_what_returned_and_holds_what_was_read() {
        let mut raw = Vec::new();
        raw.extend_from_slice(&(KIND_EVENTS << 16 | MARK as u64).to_ne_bytes());
        raw.extend_from_slice(&0x4000u64.to_ne_bytes());
        raw.extend_from_slice(&(-4i64 as u64).to_ne_bytes());
        raw.extend_from_slice(&0u64.to_ne_bytes());
        assert_eq!(
            Record::decode(&raw),
            Some(Record::Events {
                at: 0x4000,
                ret: -4,
                regions: Vec::new()
            })
        );
        // One event claimed, its bytes missing: cut short, not decoded.
        raw[24..32].copy_from_slice(&1u64.to_ne_bytes());
        assert_eq!(Record::decode(&raw), None);
        // A tracepoint's record (its type in the first two bytes) is not ours.
        assert_eq!(Record::decode(&[1, 4, 0, 0, 0, 0, 0, 0]), None);
    }
}
