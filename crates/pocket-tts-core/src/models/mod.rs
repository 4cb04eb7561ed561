//! Whole models, one file per reference model (`pocket_tts/models/*.py`).

pub mod flow_lm;
pub mod mimi;
pub mod model_state;
pub mod tts_model;
