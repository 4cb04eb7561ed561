// TEMPORARY local stress test, not committed.
mod common;
use pocket_tts_core::text_chunking::*;
use pocket_tts_core::tokenizer::Tokenizer;
#[test]
fn stress() {
    let tok = Tokenizer::from_file(&common::asset("tokenizer.model"), "sentencepiece", 4000).unwrap();
    let e: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("/tmp/stress/enc.json").unwrap()).unwrap();
    let mut bad = 0;
    for c in e["encode"].as_array().unwrap() {
        let t = c["text"].as_str().unwrap();
        let ids: Vec<u32> = c["ids"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
        let sub: Vec<u32> = c["sub"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect();
        if tok.encode(t) != ids || tok.decode(&ids) != c["decoded"].as_str().unwrap() || tok.decode(&sub) != c["sub_dec"].as_str().unwrap() {
            bad += 1; if bad < 10 { eprintln!("ENC MISMATCH {t:?}"); }
        }
    }
    let x: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("/tmp/stress/text.json").unwrap()).unwrap();
    let mut badt = 0;
    for c in x["cases"].as_array().unwrap() {
        let t = c["text"].as_str().unwrap();
        let o = &c["options"];
        let opts = TextOptions {
            pad_with_spaces_for_short_inputs: o["pad_with_spaces_for_short_inputs"].as_bool().unwrap(),
            remove_semicolons: o["remove_semicolons"].as_bool().unwrap(),
            append_terminal_punctuation: o["append_terminal_punctuation"].as_bool().unwrap(),
            capitalize_first_letter: o["capitalize_first_letter"].as_bool().unwrap(),
            replace_characters: o["replace_characters"].as_object().unwrap().iter().map(|(k,v)| (k.chars().next().unwrap(), v.as_str().unwrap().to_string())).collect(),
        };
        if c.get("error").is_some() { assert!(prepare_text_prompt(t,&opts).is_err()); continue; }
        let (p, f) = prepare_text_prompt(t, &opts).unwrap();
        let ok1 = p == c["prepared"].as_str().unwrap() && f as u64 == c["frames_after_eos_guess"].as_u64().unwrap();
        for (m, want) in c["chunks"].as_object().unwrap() {
            let got = split_into_best_sentences(&tok, t, m.parse().unwrap(), &opts).unwrap();
            let want: Vec<String> = want.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect();
            if !ok1 || got != want { badt += 1; if badt < 10 { eprintln!("TEXT MISMATCH {t:?} {opts:?}\n got {got:?}\n want {want:?}"); } }
        }
    }
    eprintln!("enc bad {bad} / {}, text bad {badt} / {}", e["encode"].as_array().unwrap().len(), x["cases"].as_array().unwrap().len());
    assert_eq!(bad + badt, 0);
}
