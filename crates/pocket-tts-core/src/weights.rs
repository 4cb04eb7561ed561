//! Checkpoint loading: a memory-mapped safetensors file whose keys are those of the
//! reference's `TTSModel.state_dict()` (`flow_lm.…`, `mimi.…`), checked tensor by tensor.
//!
//! Every tensor the model asks for is recorded; a missing or mis-shaped tensor and any
//! tensor the model never asks for are collected and reported together, so a wrong
//! checkpoint is refused with one error that names the tensors and both shapes.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use candle_core::safetensors::{BufferedSafetensors, MmapedSafetensors};
use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::VarBuilder;

use crate::{Error, Result};

pub mod prequantized;

/// How many problems an error message lists before summarising the rest.
const MAX_LISTED_PROBLEMS: usize = 12;

/// Where a checkpoint's bytes are: a file mapped into memory, or bytes in memory (the
/// WebAssembly build, which has no files).
enum Source {
    Mapped(MmapedSafetensors),
    Bytes(BufferedSafetensors),
}

impl Source {
    fn get(&self, name: &str) -> candle_core::Result<safetensors::tensor::TensorView<'_>> {
        match self {
            Source::Mapped(st) => st.get(name),
            Source::Bytes(st) => st.get(name),
        }
    }

    fn load(&self, name: &str, dev: &Device) -> candle_core::Result<Tensor> {
        match self {
            Source::Mapped(st) => st.load(name, dev),
            Source::Bytes(st) => st.load(name, dev),
        }
    }

    fn names(&self) -> Vec<String> {
        match self {
            Source::Mapped(st) => st.tensors().into_iter().map(|(n, _)| n).collect(),
            Source::Bytes(st) => st.tensors().into_iter().map(|(n, _)| n).collect(),
        }
    }

    /// Drops the pages of a tensor's bytes once copied out ([`release_pages`]): only a
    /// mapped file's pages can be dropped and read again.
    fn release(&self, data: &[u8]) {
        if let Source::Mapped(_) = self {
            release_pages(data);
        }
    }
}

/// A safetensors checkpoint (memory-mapped, or bytes) that records which tensors were read.
pub struct Checkpoint {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    st: Source,
    used: Mutex<BTreeSet<String>>,
    problems: Mutex<Vec<String>>,
    /// Set by [`Checkpoint::finish`]: a problem found afterwards (in a part read when first
    /// needed) is an error at once, as nothing would report it later.
    finished: AtomicBool,
}

impl Checkpoint {
    /// Memory-maps a safetensors file.
    ///
    /// # Errors
    /// [`Error::NotFound`] if the file does not exist, [`Error::InvalidData`] if it is
    /// not a valid safetensors file.
    pub fn open(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Err(Error::NotFound(format!(
                "checkpoint {} does not exist: check weights_path in the config",
                path.display()
            )));
        }
        if path.is_dir() {
            return Err(Error::invalid_argument(format!(
                "checkpoint {} is a folder: weights_path must name a .safetensors file",
                path.display()
            )));
        }
        // SAFETY: the file is mapped read-only; as with every mmap, modifying it while
        // the model is loading is undefined behaviour, which we document for users.
        let st = unsafe { MmapedSafetensors::new(path) }.map_err(|e| {
            Error::InvalidData(format!(
                "{} is not a readable safetensors checkpoint: {e}",
                path.display()
            ))
        })?;
        Ok(Self::with_source(path.to_path_buf(), Source::Mapped(st)))
    }

    /// A checkpoint from the bytes of a safetensors file, kept in memory (for the
    /// WebAssembly build, which has no files); `name` names it in messages (as a path
    /// would).
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the bytes are not a valid safetensors file.
    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> Result<Self> {
        let st = BufferedSafetensors::new(bytes).map_err(|e| {
            Error::InvalidData(format!(
                "{name} is not a readable safetensors checkpoint: {e}"
            ))
        })?;
        Ok(Self::with_source(PathBuf::from(name), Source::Bytes(st)))
    }

    fn with_source(path: PathBuf, st: Source) -> Self {
        Self {
            inner: Arc::new(Inner {
                path,
                st,
                used: Mutex::new(BTreeSet::new()),
                problems: Mutex::new(Vec::new()),
                finished: AtomicBool::new(false),
            }),
        }
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Names of all tensors in the file.
    pub fn names(&self) -> Vec<String> {
        self.inner.st.names()
    }

    /// A `VarBuilder` over the checkpoint (f32 on CPU) that records what is read.
    /// A missing or mis-shaped tensor yields zeros and is recorded as a problem,
    /// reported by [`Checkpoint::finish`]; once `finish` has run (a part read when first
    /// needed), a problem, non-finite values included, is an error at once.
    pub fn var_builder(&self, dtype: DType, device: &Device) -> VarBuilder<'static> {
        let backend: Box<dyn SimpleBackend> = Box::new(Recording(self.inner.clone()));
        VarBuilder::from_backend(backend, dtype, device.clone())
    }

    /// A `VarBuilder` over the checkpoint's names and shapes alone: it records each
    /// tensor asked for as read and its problems (missing, mis-shaped) as
    /// [`Checkpoint::var_builder`] does, but reads no value: every tensor it returns is a
    /// zero broadcast to the shape asked for (one element of memory). For checking a part
    /// that is read later, when it is first needed (Mimi's encoder).
    pub fn shape_var_builder(&self, dtype: DType, device: &Device) -> VarBuilder<'static> {
        let backend: Box<dyn SimpleBackend> = Box::new(ShapesOnly(self.inner.clone()));
        VarBuilder::from_backend(backend, dtype, device.clone())
    }

    /// Reports every problem found while building a model from the checkpoint:
    /// missing tensors, wrong shapes, and tensors under `prefixes` that were never read.
    ///
    /// # Errors
    /// [`Error::InvalidData`] naming the checkpoint and listing the tensors at fault.
    pub fn finish(&self, prefixes: &[&str]) -> Result<()> {
        self.inner.finished.store(true, Ordering::Release);
        let mut problems = self
            .inner
            .problems
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default();
        let used = self
            .inner
            .used
            .lock()
            .map(|u| u.clone())
            .unwrap_or_default();
        for name in self.names() {
            if prefixes.iter().any(|p| name.starts_with(p)) && !used.contains(&name) {
                problems.push(format!("unexpected tensor {name}"));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        problems.sort();
        let n = problems.len();
        let mut listed: Vec<String> = problems.into_iter().take(MAX_LISTED_PROBLEMS).collect();
        if n > MAX_LISTED_PROBLEMS {
            listed.push(format!("and {} more", n - MAX_LISTED_PROBLEMS));
        }
        Err(Error::InvalidData(format!(
            "checkpoint {} does not match the config ({n} problem{}): {}. Use the checkpoint made for this config",
            self.inner.path.display(),
            if n == 1 { "" } else { "s" },
            listed.join("; ")
        )))
    }
}

thread_local! {
    /// The checkpoint whose model is being built on this thread ([`Checkpoint::map_scope`]).
    static MAPPED: RefCell<Option<Arc<Inner>>> = const { RefCell::new(None) };
}

/// While alive, [`with_mapped_f32`] on this thread reads the tensors of the checkpoint
/// that made it in place, from its memory map ([`Checkpoint::map_scope`]).
pub(crate) struct MapScope {
    previous: Option<Arc<Inner>>,
}

impl Drop for MapScope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        MAPPED.with(|m| *m.borrow_mut() = previous);
    }
}

impl Checkpoint {
    /// Lets the weights that are converted as they are read (int8 / 4-bit / 16-bit linears)
    /// be read in place from this checkpoint's memory map while the returned scope lives,
    /// on this thread ([`with_mapped_f32`]), instead of through a heap copy made by the
    /// [`VarBuilder`]: the load's transient memory is then one converted linear, not its
    /// `f32` copy as well (peak RSS).
    pub(crate) fn map_scope(&self) -> MapScope {
        let previous = MAPPED.with(|m| m.borrow_mut().replace(self.inner.clone()));
        MapScope { previous }
    }
}

/// Runs `f` over the `f32` values of tensor `name` (shape `dims`), read in place from the
/// memory map of the checkpoint of this thread's [`MapScope`], then returns the tensor's
/// pages to the system (as a [`VarBuilder`] read does). The tensor is recorded as used and
/// a non-finite value is recorded as a problem of the checkpoint, as a [`VarBuilder`] read
/// does.
///
/// Returns `Ok(None)` (nothing read: the caller reads the tensor through its
/// [`VarBuilder`], which reports any problem) when no scope is active, or when the tensor
/// is missing, of another shape or dtype than `f32`, or not aligned for `f32` in the file.
///
/// # Errors
/// A non-finite value once the checkpoint's problems were already reported
/// ([`Checkpoint::finish`]).
pub(crate) fn with_mapped_f32<R>(
    name: &str,
    dims: &[usize],
    f: impl FnOnce(&[f32]) -> R,
) -> candle_core::Result<Option<R>> {
    let (mut f, mut out) = (Some(f), None);
    with_mapped_parts(name, dims, usize::MAX, |values, _| {
        out = f.take().map(|f| f(values));
    })?;
    Ok(out)
}

/// [`with_mapped_f32`] part by part, for a `[rows, cols]` matrix: `f(part, first_row)` for
/// each block of `rows_per_part` rows in order (the last one possibly shorter), each
/// block's finiteness checked before and its pages released after, so that the tensor's
/// pages are never all resident at once (a 16 MiB weight converted to 4 bits adds about
/// one part to the load's peak memory, not 16 MiB). Returns `false`, calling nothing,
/// when the tensor is not mapped as `f32` `[rows, cols]` (read it through the
/// `VarBuilder`).
///
/// # Errors
/// A non-finite value, as [`with_mapped_f32`].
pub(crate) fn with_mapped_f32_rows(
    name: &str,
    (rows, cols): (usize, usize),
    rows_per_part: usize,
    mut f: impl FnMut(&[f32], usize),
) -> candle_core::Result<bool> {
    let part_len = rows_per_part.max(1).saturating_mul(cols);
    with_mapped_parts(name, &[rows, cols], part_len, |part, offset| {
        f(part, offset.checked_div(cols).unwrap_or(0))
    })
}

/// The mapped `f32` tensor `name` of shape `dims`, handed to `f(part, offset)` in parts
/// of `part_len` values (offset in values; one empty part for an empty tensor): each
/// part's finiteness checked before `f` sees it (a non-finite value recorded as a problem
/// of the checkpoint, with its flat index) and its pages released after. Returns `false`,
/// calling nothing, when no map scope is active or the tensor is missing, of another
/// shape or dtype than `f32`, or not aligned for `f32` in the file.
///
/// # Errors
/// A non-finite value once the checkpoint's problems were already reported
/// ([`Checkpoint::finish`]).
fn with_mapped_parts(
    name: &str,
    dims: &[usize],
    part_len: usize,
    mut f: impl FnMut(&[f32], usize),
) -> candle_core::Result<bool> {
    if cfg!(target_endian = "big") {
        // safetensors stores little-endian values.
        return Ok(false);
    }
    let Some(inner) = MAPPED.with(|m| m.borrow().clone()) else {
        return Ok(false);
    };
    let Ok(view) = inner.st.get(name) else {
        return Ok(false);
    };
    if view.dtype() != safetensors::Dtype::F32 || view.shape() != dims {
        return Ok(false);
    }
    let data = view.data();
    // SAFETY: every bit pattern is a valid f32; `align_to` only hands out the aligned
    // middle part, which is checked to be the whole slice.
    let (head, values, tail) = unsafe { data.align_to::<f32>() };
    if !head.is_empty() || !tail.is_empty() {
        return Ok(false);
    }
    if let Ok(mut u) = inner.used.lock() {
        u.insert(name.to_string());
    }
    if values.is_empty() {
        f(values, 0);
        return Ok(true);
    }
    let part_len = part_len.max(1);
    for (i, part) in values.chunks(part_len).enumerate() {
        let offset = i * part_len;
        if let Some(j) = non_finite_index(part) {
            Recording(inner.clone()).record_problem(format!(
                "tensor {name} holds a non-finite value (NaN or infinity) at flat index {}: \
                 the checkpoint is corrupt",
                offset + j
            ))?;
        }
        f(part, offset);
        release_pages(&data[offset * 4..(offset + part.len()) * 4]);
    }
    if values.len() > part_len {
        // The pages straddling two parts.
        release_pages(data);
    }
    Ok(true)
}

/// The bytes of one tensor inside a checkpoint's memory map; keeps the map alive.
struct MappedRegion {
    _owner: Arc<Inner>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the region is read-only bytes of a file mapping that stays mapped as long as
// `_owner` (which owns the map) lives; nothing writes through `ptr`.
unsafe impl Send for MappedRegion {}
// SAFETY: as above, shared reads only.
unsafe impl Sync for MappedRegion {}

impl AsRef<[u8]> for MappedRegion {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr..ptr + len` is a slice of the map that `_owner` keeps mapped.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// An `f32` matrix `[rows, cols]` (row-major) read in place from a checkpoint's memory map
/// (or, for models built without a checkpoint, owned on the heap): only the pages that are
/// read become resident, e.g. the rows of the text tokens of a lookup table.
#[derive(Clone, Debug)]
pub struct MappedF32 {
    bytes: pocket_tts_simd::SharedBytes,
    rows: usize,
    cols: usize,
}

impl MappedF32 {
    /// `[rows, cols]`.
    pub fn dims(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// The values, `rows · cols` of them.
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: every bit pattern is a valid f32; the bytes were checked to be aligned
        // and a whole number of f32 when `self` was made, and they never change.
        let (_, values, _) = unsafe { self.bytes.as_slice().align_to::<f32>() };
        values
    }
}

/// The `f32` tensor `name` (shape `[rows, cols]`) of the checkpoint of this thread's
/// [`MapScope`], left in its memory map ([`MappedF32`]): recorded as used, checked for
/// non-finite values (a problem of the checkpoint, as a [`VarBuilder`] read records), and
/// its pages returned to the system until they are read again.
///
/// Returns `Ok(None)` (the caller reads the tensor through its [`VarBuilder`], which
/// reports any problem) when no scope is active, or when the tensor is missing, of another
/// shape or dtype than `f32`, or not aligned for `f32` in the file.
///
/// # Errors
/// A non-finite value once the checkpoint's problems were already reported.
pub(crate) fn mapped_f32(
    name: &str,
    rows: usize,
    cols: usize,
) -> candle_core::Result<Option<MappedF32>> {
    let Some(inner) = MAPPED.with(|m| m.borrow().clone()) else {
        return Ok(None);
    };
    let found = with_mapped_f32(name, &[rows, cols], |values| {
        (values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    })?;
    let Some((ptr, len)) = found else {
        return Ok(None);
    };
    let region = MappedRegion {
        _owner: inner,
        ptr,
        len,
    };
    let bytes = pocket_tts_simd::SharedBytes::new(Arc::new(region), 0..len)
        .ok_or_else(|| candle_core::Error::Msg(format!("{name}: mapped range out of bounds")))?;
    Ok(Some(MappedF32 { bytes, rows, cols }))
}

struct Recording(Arc<Inner>);

impl Recording {
    /// Records a problem for [`Checkpoint::finish`], or returns it as an error once
    /// `finish` has run.
    fn record_problem(&self, msg: String) -> candle_core::Result<()> {
        if self.0.finished.load(Ordering::Acquire) {
            return Err(candle_core::Error::Msg(format!(
                "checkpoint {}: {msg}",
                self.0.path.display()
            )));
        }
        if let Ok(mut p) = self.0.problems.lock() {
            p.push(msg);
        }
        Ok(())
    }
}

impl Recording {
    /// Records a problem if a floating-point tensor holds NaN or an infinity: such a
    /// checkpoint would speak silence or noise without a word.
    fn check_finite(&self, name: &str, t: &Tensor) -> candle_core::Result<()> {
        if let Some(i) = first_non_finite(t)? {
            self.record_problem(format!(
                "tensor {name} holds a non-finite value (NaN or infinity) at flat index {i}: \
                 the checkpoint is corrupt"
            ))?;
        }
        Ok(())
    }
}

/// Index (in row-major order) of the first NaN or infinite element of a floating-point
/// tensor; `None` for finite or integer tensors.
pub fn first_non_finite(t: &Tensor) -> candle_core::Result<Option<usize>> {
    if !t.dtype().is_float() {
        return Ok(None);
    }
    let t = t.to_dtype(DType::F32)?.flatten_all()?;
    let (storage, layout) = t.storage_and_layout();
    let candle_core::Storage::Cpu(cpu) = &*storage else {
        drop(storage);
        let v = t.to_vec1::<f32>()?;
        return Ok(non_finite_index(&v));
    };
    let data = cpu.as_slice::<f32>()?;
    let data = match layout.contiguous_offsets() {
        Some((start, end)) => &data[start..end],
        None => return Ok(non_finite_index(&t.to_vec1::<f32>()?)),
    };
    Ok(non_finite_index(data))
}

/// Index of the first NaN or infinity in `data`. Scans blocks without an early exit (so the
/// compiler vectorizes them) and only looks inside a block that has one.
fn non_finite_index(data: &[f32]) -> Option<usize> {
    const BLOCK: usize = 1024;
    data.chunks(BLOCK).enumerate().find_map(|(b, block)| {
        let bad = block.iter().fold(false, |acc, x| acc | !x.is_finite());
        if bad {
            block
                .iter()
                .position(|x| !x.is_finite())
                .map(|i| b * BLOCK + i)
        } else {
            None
        }
    })
}

impl SimpleBackend for Recording {
    fn get(
        &self,
        s: Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        dev: &Device,
    ) -> candle_core::Result<Tensor> {
        if let Ok(mut u) = self.0.used.lock() {
            u.insert(name.to_string());
        }
        match self.0.st.get(name) {
            Err(_) => {
                self.record_problem(format!("missing tensor {name} (expected shape {s:?})"))?;
                Tensor::zeros(s, dtype, dev)
            }
            Ok(view) if view.shape() != s.dims() => {
                self.record_problem(format!(
                    "tensor {name} has shape {:?}, expected {s:?}",
                    view.shape()
                ))?;
                Tensor::zeros(s, dtype, dev)
            }
            Ok(view) => {
                let t = self.0.st.load(name, dev)?.to_dtype(dtype)?;
                self.0.st.release(view.data());
                self.check_finite(name, &t)?;
                Ok(t)
            }
        }
    }

    fn get_unchecked(&self, name: &str, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        if let Ok(mut u) = self.0.used.lock() {
            u.insert(name.to_string());
        }
        let view = self.0.st.get(name)?;
        let t = self.0.st.load(name, dev)?.to_dtype(dtype)?;
        self.0.st.release(view.data());
        self.check_finite(name, &t)?;
        Ok(t)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.0.st.get(name).is_ok()
    }
}

/// The backend of [`Checkpoint::shape_var_builder`].
struct ShapesOnly(Arc<Inner>);

impl SimpleBackend for ShapesOnly {
    fn get(
        &self,
        s: Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        dev: &Device,
    ) -> candle_core::Result<Tensor> {
        let recording = Recording(self.0.clone());
        if let Ok(mut u) = self.0.used.lock() {
            u.insert(name.to_string());
        }
        match self.0.st.get(name) {
            Err(_) => {
                recording.record_problem(format!("missing tensor {name} (expected shape {s:?})"))?
            }
            Ok(view) if view.shape() != s.dims() => recording.record_problem(format!(
                "tensor {name} has shape {:?}, expected {s:?}",
                view.shape()
            ))?,
            Ok(_) => {}
        }
        Tensor::zeros((), dtype, dev)?.broadcast_as(s)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        if let Ok(mut u) = self.0.used.lock() {
            u.insert(name.to_string());
        }
        let shape = self.0.st.get(name)?.shape().to_vec();
        Tensor::zeros((), dtype, dev)?.broadcast_as(shape)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.0.st.get(name).is_ok()
    }
}

/// Drops the pages of `data`, a tensor's bytes inside the read-only checkpoint map, from
/// the process's resident set once the tensor has been copied out of it (`madvise`
/// `MADV_DONTNEED` on the whole pages inside `data`). Without it, loading holds every
/// weight twice (the touched map pages and the copy): ~880 MB resident for the 438 MB
/// f32 checkpoint instead of ~440 MB. The file's pages stay in the page cache, and a
/// later read of the map is served from it, so this changes memory use, never content.
/// A no-op off Unix or when the kernel refuses the advice.
fn release_pages(data: &[u8]) {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = if page > 0 { page as usize } else { 4096 };
        let start = (data.as_ptr() as usize).next_multiple_of(page);
        let end = (data.as_ptr() as usize + data.len()) / page * page;
        if end > start {
            // SAFETY: [start, end) lies inside `data`, a part of a read-only
            // file mapping that stays mapped; MADV_DONTNEED on it only drops
            // the process's references to the pages, which are re-read from the file on
            // the next access, so no content changes.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = data;
}

/// A `VarBuilder` whose tensors are seeded pseudo-random values of whatever shape the model
/// asks for: a model with the released architecture and random weights, for benchmarks
/// and tests that must run without downloaded weights or Python.
///
/// Each tensor depends only on `seed` and its name. Values are uniform in
/// `[-1/sqrt(fan_in), 1/sqrt(fan_in)]` (fan_in = product of all but the first dimension),
/// like `nn.Linear`'s default init; 1-d tensors named `*weight`, `*alpha`, `*scale` or
/// `emb_std` are near 1, other 1-d tensors near 0, so norms and scales stay sensible.
pub fn random_var_builder(seed: u64, device: &Device) -> VarBuilder<'static> {
    let backend: Box<dyn SimpleBackend> = Box::new(RandomBackend { seed });
    VarBuilder::from_backend(backend, DType::F32, device.clone())
}

struct RandomBackend {
    seed: u64,
}

impl RandomBackend {
    fn values(&self, name: &str, dims: &[usize]) -> Vec<f32> {
        // FNV-1a of the name, mixed with the seed, drives a SplitMix64 stream.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut state = h;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            // Uniform in [-1, 1).
            (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        let n: usize = dims.iter().product();
        if dims.len() == 1 {
            let one = ["weight", "alpha", "scale", "emb_std"]
                .iter()
                .any(|s| name.ends_with(s));
            let base = if one { 1.0 } else { 0.0 };
            return (0..n).map(|_| base + 0.05 * next()).collect();
        }
        let fan_in: usize = dims[1..].iter().product::<usize>().max(1);
        let bound = 1.0 / (fan_in as f32).sqrt();
        (0..n).map(|_| bound * next()).collect()
    }
}

impl SimpleBackend for RandomBackend {
    fn get(
        &self,
        s: Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        dev: &Device,
    ) -> candle_core::Result<Tensor> {
        let v = self.values(name, s.dims());
        Tensor::from_vec(v, s, dev)?.to_dtype(dtype)
    }

    fn get_unchecked(&self, name: &str, _: DType, _: &Device) -> candle_core::Result<Tensor> {
        candle_core::bail!("random weights need a shape for {name}")
    }

    fn contains_tensor(&self, _: &str) -> bool {
        true
    }
}
