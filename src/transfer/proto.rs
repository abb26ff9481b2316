//! The wire format between `send` and `receive`, version 1. Little-endian throughout.
//!
//! ```text
//! sender → receiver   "IOSCOPE-XFER" u16 version, u16 token length, token
//! receiver → sender   reply (u8 status: 0 ok, 1 refused; u16 length; message)
//! per file:
//!   sender → receiver u8 1, u16 name length, name (relative, '/'-separated), u64 size,
//!                     u32 mode, then `size` bytes, then u32 XOR and u64 XXH3-64
//!   receiver → sender reply (the file is verified, synced and in place when status is 0)
//! end:
//!   sender → receiver u8 0
//!   receiver → sender reply
//! ```
//!
//! Every length is bounded before anything is allocated: names at [`MAX_NAME`] bytes,
//! tokens at [`MAX_TOKEN`], messages at [`MAX_MESSAGE`]; file bytes are streamed through
//! fixed buffers. The XOR is the conventions' checksum; XXH3 catches what XOR cannot
//! (swapped words, a zeroed pair).

use anyhow::{Context, Result, anyhow, bail};
use std::io::{Read, Write};

/// The first bytes of every connection.
pub const MAGIC: &[u8; 12] = b"IOSCOPE-XFER";
/// This protocol's version.
pub const VERSION: u16 = 1;
/// Longest relative name accepted (bytes).
pub const MAX_NAME: usize = 4096;
/// Longest token accepted (bytes).
pub const MAX_TOKEN: usize = 256;
/// Longest reply message (bytes).
pub const MAX_MESSAGE: usize = 1024;

/// A file's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Relative name, '/'-separated.
    pub name: Vec<u8>,
    /// Bytes that follow.
    pub size: u64,
    /// Permission bits.
    pub mode: u32,
}

/// A file's trailer: what the sender computed over the bytes it sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// The XOR of the conventions.
    pub xor: u32,
    /// XXH3-64 of the bytes.
    pub hash: u64,
}

/// Bytes both sums of a [`Digest`] read in turn: inside a core's L1 (32 KiB on the
/// development VM's Zen 3), so the second pass is served from cache.
pub const DIGEST_CHUNK: usize = 16 << 10;

/// The checksum pair of a stream of bytes, fed in chunks.
#[derive(Clone)]
pub struct Digest {
    xor: crate::checksum::Xor32,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl Default for Digest {
    fn default() -> Self {
        Self::new()
    }
}

impl Digest {
    /// An empty digest.
    pub fn new() -> Self {
        Self {
            xor: crate::checksum::Xor32::new(),
            hash: xxhash_rust::xxh3::Xxh3::new(),
        }
    }

    /// Adds the next bytes: both sums over each [`DIGEST_CHUNK`] in turn, XXH3 first (it
    /// is bound by its arithmetic, so it hides the wait for memory), then the XOR over what
    /// XXH3 just brought into L1 (where it runs several times faster than from memory).
    pub fn update(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(DIGEST_CHUNK) {
            self.hash.update(chunk);
            self.xor.update(chunk);
        }
    }

    /// The trailer for the bytes so far.
    pub fn trailer(&self) -> Trailer {
        Trailer {
            xor: self.xor.value(),
            hash: self.hash.digest(),
        }
    }
}

/// Sends the greeting with `token`.
pub fn write_hello(w: &mut (impl Write + ?Sized), token: &[u8]) -> Result<()> {
    let mut out = Vec::with_capacity(16 + token.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(token.len() as u16).to_le_bytes());
    out.extend_from_slice(token);
    w.write_all(&out).context("send the greeting")
}

/// Reads the greeting; returns the token.
pub fn read_hello(r: &mut (impl Read + ?Sized)) -> Result<Vec<u8>> {
    let magic: [u8; 12] = read_array(r, "read the greeting")?;
    if &magic != MAGIC {
        bail!("not an ioscope sender (bad magic)");
    }
    let version = u16::from_le_bytes(read_array(r, "read the greeting")?);
    if version != VERSION {
        bail!("protocol version {version} is not {VERSION}");
    }
    let len = u16::from_le_bytes(read_array(r, "read the greeting")?) as usize;
    if len > MAX_TOKEN {
        bail!("token of {len} bytes is longer than {MAX_TOKEN}");
    }
    let mut token = vec![0u8; len];
    fill(r, &mut token, "read the token")?;
    Ok(token)
}

/// Appends a file's header to `out`.
pub fn put_header(out: &mut Vec<u8>, h: &Header) {
    out.push(1);
    out.extend_from_slice(&(h.name.len() as u16).to_le_bytes());
    out.extend_from_slice(&h.name);
    out.extend_from_slice(&h.size.to_le_bytes());
    out.extend_from_slice(&h.mode.to_le_bytes());
}

/// Sends a file's header.
pub fn write_header(w: &mut (impl Write + ?Sized), h: &Header) -> Result<()> {
    let mut out = Vec::with_capacity(15 + h.name.len());
    put_header(&mut out, h);
    w.write_all(&out).context("send a file header")
}

/// Appends the end of the stream to `out`.
pub fn put_end(out: &mut Vec<u8>) {
    out.push(0);
}

/// Reads the next file's header, or `None` at the end of the stream.
pub fn read_header(r: &mut (impl Read + ?Sized)) -> Result<Option<Header>> {
    let kind: [u8; 1] = read_array(r, "read a file header")?;
    match kind[0] {
        0 => return Ok(None),
        1 => {}
        k => bail!("bad frame kind {k}"),
    }
    let len = u16::from_le_bytes(read_array(r, "read a file header")?) as usize;
    if len > MAX_NAME {
        bail!("name of {len} bytes is longer than {MAX_NAME}");
    }
    let mut name = vec![0u8; len];
    fill(r, &mut name, "read a file name")?;
    let size = u64::from_le_bytes(read_array(r, "read a file header")?);
    let mode = u32::from_le_bytes(read_array(r, "read a file header")?);
    Ok(Some(Header { name, size, mode }))
}

/// Appends a trailer to `out`.
pub fn put_trailer(out: &mut Vec<u8>, t: Trailer) {
    out.extend_from_slice(&t.xor.to_le_bytes());
    out.extend_from_slice(&t.hash.to_le_bytes());
}

/// Sends a trailer.
pub fn write_trailer(w: &mut (impl Write + ?Sized), t: Trailer) -> Result<()> {
    let mut out = Vec::with_capacity(12);
    put_trailer(&mut out, t);
    w.write_all(&out).context("send a file trailer")
}

/// Reads a trailer.
pub fn read_trailer(r: &mut (impl Read + ?Sized)) -> Result<Trailer> {
    let xor = u32::from_le_bytes(read_array(r, "read a file trailer")?);
    let hash = u64::from_le_bytes(read_array(r, "read a file trailer")?);
    Ok(Trailer { xor, hash })
}

/// Sends a reply: `Ok(())` or the refusal's message.
pub fn write_reply(
    w: &mut (impl Write + ?Sized),
    outcome: &std::result::Result<(), String>,
) -> Result<()> {
    let (status, message) = match outcome {
        Ok(()) => (0u8, ""),
        Err(m) => (1u8, m.as_str()),
    };
    let mut cut = message.len().min(MAX_MESSAGE);
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    let message = &message.as_bytes()[..cut];
    let mut out = Vec::with_capacity(3 + message.len());
    out.push(status);
    out.extend_from_slice(&(message.len() as u16).to_le_bytes());
    out.extend_from_slice(message);
    w.write_all(&out).context("send a reply")
}

/// Reads a reply: `Ok(())` or the receiver's refusal.
pub fn read_reply(r: &mut (impl Read + ?Sized)) -> Result<std::result::Result<(), String>> {
    let what = "read the receiver's reply";
    let status: [u8; 1] = read_array(r, what)?;
    let len = (u16::from_le_bytes(read_array(r, what)?) as usize).min(MAX_MESSAGE);
    let mut message = vec![0u8; len];
    fill(r, &mut message, what)?;
    Ok(match status[0] {
        0 => Ok(()),
        _ => Err(printable(&String::from_utf8_lossy(&message))),
    })
}

pub use crate::text::printable;

/// Fills `buf` from `r`; an error names what was being read and says why in words: the
/// stream ended, or the peer went silent for longer than the socket's timeout.
fn fill(r: &mut (impl Read + ?Sized), buf: &mut [u8], what: &str) -> Result<()> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => anyhow!("{what}: the stream ended"),
        _ if timed_out(&e) => anyhow!("{what}: the peer went silent (timed out)"),
        _ => anyhow::Error::from(e).context(what.to_string()),
    })
}

/// Whether a socket call failed because the socket's timeout ran out (SO_RCVTIMEO and
/// SO_SNDTIMEO give EAGAIN).
pub(super) fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn read_array<const N: usize>(r: &mut (impl Read + ?Sized), what: &str) -> Result<[u8; N]> {
    let mut b = [0u8; N];
    fill(r, &mut b, what)?;
    Ok(b)
}

/// Checks a relative name from the wire and returns its components: not empty, no NUL, not
/// absolute, no empty, `.` or `..` component, components of at most 255 bytes.
pub fn confined(name: &[u8]) -> std::result::Result<Vec<&[u8]>, String> {
    let shown = String::from_utf8_lossy(name);
    if name.is_empty() {
        return Err("an empty name".into());
    }
    if name.contains(&0) {
        return Err(format!("name {shown:?} contains a NUL byte"));
    }
    if name[0] == b'/' {
        return Err(format!("name {shown:?} is absolute"));
    }
    let parts: Vec<&[u8]> = name.split(|&b| b == b'/').collect();
    for p in &parts {
        match *p {
            b"" => return Err(format!("name {shown:?} has an empty component")),
            b"." | b".." => return Err(format!("name {shown:?} leaves or names its directory")),
            p if p.len() > 255 => {
                return Err(format!("name {shown:?} has a component over 255 bytes"));
            }
            _ => {}
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let mut wire = Vec::new();
        write_hello(&mut wire, b"secret").unwrap();
        let h = Header {
            name: b"a/b.txt".to_vec(),
            size: 3,
            mode: 0o640,
        };
        write_header(&mut wire, &h).unwrap();
        wire.extend_from_slice(b"xyz");
        let mut d = Digest::new();
        d.update(b"xy");
        d.update(b"z");
        write_trailer(&mut wire, d.trailer()).unwrap();
        put_end(&mut wire);
        write_reply(&mut wire, &Err("no room".into())).unwrap();
        let mut r = &wire[..];
        assert_eq!(read_hello(&mut r).unwrap(), b"secret");
        assert_eq!(read_header(&mut r).unwrap(), Some(h));
        let mut body = [0u8; 3];
        r.read_exact(&mut body).unwrap();
        let t = read_trailer(&mut r).unwrap();
        let mut whole = Digest::new();
        whole.update(b"xyz");
        assert_eq!(t, whole.trailer());
        assert_eq!(read_header(&mut r).unwrap(), None);
        assert_eq!(read_reply(&mut r).unwrap(), Err("no room".to_string()));
    }

    #[test]
    fn bad_frames_are_refused_before_allocating() {
        assert!(read_hello(&mut &b"HTTP/1.1 GET"[..]).is_err());
        let mut wire = MAGIC.to_vec();
        wire.extend_from_slice(&1u16.to_le_bytes());
        wire.extend_from_slice(&60000u16.to_le_bytes());
        assert!(
            read_hello(&mut &wire[..])
                .unwrap_err()
                .to_string()
                .contains("longer")
        );
        let mut wire = vec![1u8];
        wire.extend_from_slice(&u16::MAX.to_le_bytes());
        assert!(
            read_header(&mut &wire[..])
                .unwrap_err()
                .to_string()
                .contains("longer")
        );
        assert!(read_header(&mut &[7u8][..]).is_err());
        assert!(read_header(&mut &[1u8, 3][..]).is_err(), "truncated");
    }

    #[test]
    fn names_are_confined() {
        assert_eq!(confined(b"a/b/c").unwrap(), [&b"a"[..], b"b", b"c"]);
        for bad in [
            &b""[..],
            b"/etc/passwd",
            b"../x",
            b"a/../../x",
            b"a//b",
            b"./a",
            b"a/",
            b"a\0b",
        ] {
            assert!(confined(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert!(confined(&[b'x'; 256]).is_err());
        assert!(confined("ünï/\u{7f}".as_bytes()).is_ok());
    }

    #[test]
    fn the_digest_catches_swapped_words_that_xor_cannot() {
        let (mut a, mut b) = (Digest::new(), Digest::new());
        a.update(b"AAAABBBB");
        b.update(b"BBBBAAAA");
        assert_eq!(a.trailer().xor, b.trailer().xor);
        assert_ne!(a.trailer().hash, b.trailer().hash);
    }
}
