//! [`SharedBytes`]: read-only bytes owned by something shared (a `Vec`, or a memory map of
//! a checkpoint), so that quantized weights can be read in place from a mapped file
//! instead of being copied to the heap.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A byte range of a shared owner (a `Vec<u8>`, a memory map): cheap to clone, never
/// copied. The owner lives as long as any `SharedBytes` of it.
#[derive(Clone)]
pub struct SharedBytes {
    owner: Arc<dyn AsRef<[u8]> + Send + Sync>,
    start: usize,
    len: usize,
}

impl SharedBytes {
    /// The bytes `range` of `owner`, or `None` when `range` is not inside `owner`.
    pub fn new(owner: Arc<dyn AsRef<[u8]> + Send + Sync>, range: Range<usize>) -> Option<Self> {
        let total = (*owner).as_ref().len();
        if range.start > range.end || range.end > total {
            return None;
        }
        Some(Self {
            owner,
            start: range.start,
            len: range.end - range.start,
        })
    }

    /// Owns `v` (on the heap).
    pub fn from_vec(v: Vec<u8>) -> Self {
        let len = v.len();
        Self {
            owner: Arc::new(v),
            start: 0,
            len,
        }
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        &(*self.owner).as_ref()[self.start..self.start + self.len]
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedBytes({} bytes)", self.len)
    }
}

impl PartialEq for SharedBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
