#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocket_tts_fuzz::tokenizer(data));
