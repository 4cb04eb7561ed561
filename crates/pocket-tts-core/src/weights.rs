//! Checkpoint loading: a memory-mapped safetensors file whose keys are those of the
//! reference's `TTSModel.state_dict()` (`flow_lm.…`, `mimi.…`), checked tensor by tensor.
//!
//! Every tensor the model asks for is recorded; a missing or mis-shaped tensor and any
//! tensor the model never asks for are collected and reported together, so a wrong
//! checkpoint is refused with one error that names the tensors and both shapes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use candle_core::safetensors::MmapedSafetensors;
use candle_core::{DType, Device, Shape, Tensor};
use candle_nn::var_builder::SimpleBackend;
use candle_nn::VarBuilder;

use crate::{Error, Result};

/// How many problems an error message lists before summarising the rest.
const MAX_LISTED_PROBLEMS: usize = 12;

/// A memory-mapped safetensors checkpoint that records which tensors were read.
pub struct Checkpoint {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    st: MmapedSafetensors,
    used: Mutex<BTreeSet<String>>,
    problems: Mutex<Vec<String>>,
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
        // SAFETY: the file is mapped read-only; as with every mmap, modifying it while
        // the model is loading is undefined behaviour, which we document for users.
        let st = unsafe { MmapedSafetensors::new(path) }.map_err(|e| {
            Error::InvalidData(format!(
                "{} is not a readable safetensors checkpoint: {e}",
                path.display()
            ))
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                st,
                used: Mutex::new(BTreeSet::new()),
                problems: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Names of all tensors in the file.
    pub fn names(&self) -> Vec<String> {
        self.inner
            .st
            .tensors()
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    /// A `VarBuilder` over the checkpoint (f32 on CPU) that records what is read.
    /// A missing or mis-shaped tensor yields zeros and is recorded as a problem,
    /// reported by [`Checkpoint::finish`].
    pub fn var_builder(&self, dtype: DType, device: &Device) -> VarBuilder<'static> {
        let backend: Box<dyn SimpleBackend> = Box::new(Recording(self.inner.clone()));
        VarBuilder::from_backend(backend, dtype, device.clone())
    }

    /// Reports every problem found while building a model from the checkpoint:
    /// missing tensors, wrong shapes, and tensors under `prefixes` that were never read.
    ///
    /// # Errors
    /// [`Error::InvalidData`] naming the checkpoint and listing the tensors at fault.
    pub fn finish(&self, prefixes: &[&str]) -> Result<()> {
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

struct Recording(Arc<Inner>);

impl Recording {
    fn record_problem(&self, msg: String) {
        if let Ok(mut p) = self.0.problems.lock() {
            p.push(msg);
        }
    }
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
                self.record_problem(format!("missing tensor {name} (expected shape {s:?})"));
                Tensor::zeros(s, dtype, dev)
            }
            Ok(view) if view.shape() != s.dims() => {
                self.record_problem(format!(
                    "tensor {name} has shape {:?}, expected {s:?}",
                    view.shape()
                ));
                Tensor::zeros(s, dtype, dev)
            }
            Ok(_) => self.0.st.load(name, dev)?.to_dtype(dtype),
        }
    }

    fn get_unchecked(&self, name: &str, dtype: DType, dev: &Device) -> candle_core::Result<Tensor> {
        if let Ok(mut u) = self.0.used.lock() {
            u.insert(name.to_string());
        }
        self.0.st.load(name, dev)?.to_dtype(dtype)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.0.st.get(name).is_ok()
    }
}
