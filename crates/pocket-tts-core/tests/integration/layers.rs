//! The core crate's layers (see AGENTS.md): every top-level module imports only modules of
//! its own layer or of the layers below, and the import graph between top-level modules
//! has no cycle. Read from the sources (`crate::name` paths outside comments).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Top-level modules by layer, bottom first.
const LAYERS: &[(&str, &[&str])] = &[
    ("error", &["error"]),
    (
        "inputs",
        &[
            "config",
            "hub",
            "memory",
            "weights",
            "audio",
            "output",
            "torch_rng",
        ],
    ),
    ("model definition", &["modules", "models"]),
    ("fast kernels", &["fast"]),
    ("runtimes", &["runtime"]),
    ("pipeline", &["tts_model"]),
];

/// Imports that skip a layer although it is below: the pipeline sees the runtimes only
/// through the traits of `runtime`, never the CPU runtime's types in `fast`.
const FORBIDDEN: &[(&str, &str)] = &[("tts_model", "fast")];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `crate::NAME` paths in the code of `text` (comment lines skipped).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let code = code.split(" //").next().unwrap_or(code);
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
            rest = after;
        }
        // `use crate::{a, b}` groups.
        if let Some(i) = code.find("crate::{") {
            let group = &code[i + "crate::{".len()..];
            for part in group.split([',', '}']) {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
    }
    found
}

/// Top-level module → the top-level modules it refers to, in the core crate.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    crate_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), |name| {
        layer_of(name).is_some()
    })
}

/// Top-level module → the top-level modules it refers to, in the crate whose sources are
/// `src`; `known` tells which names are top-level modules.
fn crate_graph(src: &Path, known: impl Fn(&str) -> bool) -> BTreeMap<String, BTreeSet<String>> {
    let src = src.to_path_buf();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a component");
        let top = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = fs::read_to_string(&file).expect("read a source file");
        let deps = graph.entry(top.clone()).or_default();
        for name in crate_paths(&text) {
            // Root re-exports (`crate::Result`, `crate::Error`) belong to `error`.
            let name = match name.as_str() {
                "Result" | "Error" => "error".to_string(),
                _ => name,
            };
            if name != top && known(&name) {
                deps.insert(name);
            }
        }
    }
    graph
}

#[test]
fn every_top_level_module_has_a_layer() {
    let graph = import_graph();
    let unknown: Vec<_> = graph.keys().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unknown.is_empty(),
        "top-level modules without a layer in tests/integration/layers.rs (and AGENTS.md): {unknown:?}"
    );
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let mut wrong = Vec::new();
    for (module, deps) in import_graph() {
        let Some(own) = layer_of(&module) else {
            continue;
        };
        for dep in deps {
            let theirs = layer_of(&dep).expect("known module");
            if theirs > own {
                wrong.push(format!(
                    "{module} ({}) imports {dep} ({})",
                    LAYERS[own].0, LAYERS[theirs].0
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports going up a layer:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_pipeline_sees_runtimes_only_through_their_traits() {
    let graph = import_graph();
    let wrong: Vec<String> = FORBIDDEN
        .iter()
        .filter(|(from, to)| graph.get(*from).is_some_and(|deps| deps.contains(*to)))
        .map(|(from, to)| format!("{from} imports {to}"))
        .collect();
    assert!(wrong.is_empty(), "forbidden imports: {wrong:?}");
}

/// The first import cycle of `graph`, if any.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first search with colours: 1 = on the stack, 2 = done.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        colour: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match colour.get(m) {
            Some(2) => return None,
            Some(1) => {
                let start = stack.iter().position(|s| s == m).unwrap_or(0);
                let mut cycle = stack[start..].to_vec();
                cycle.push(m.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        colour.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for dep in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(dep, graph, colour, stack) {
                return Some(c);
            }
        }
        stack.pop();
        colour.insert(m.to_string(), 2);
        None
    }
    let mut colour = BTreeMap::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut colour, &mut Vec::new()))
}

#[test]
fn the_import_graph_has_no_cycle() {
    if let Some(cycle) = find_cycle(&import_graph()) {
        panic!("import cycle: {}", cycle.join(" -> "));
    }
}

/// Every crate of the workspace: no import cycle between its top-level modules.
#[test]
fn no_crate_has_an_import_cycle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for entry in fs::read_dir(&crates).expect("read crates/") {
        let src = entry.expect("dir entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        let modules: BTreeSet<String> = fs::read_dir(&src)
            .expect("read src")
            .filter_map(|e| {
                let name = e.ok()?.file_name().to_string_lossy().to_string();
                let name = name.strip_suffix(".rs").unwrap_or(&name).to_string();
                (name != "lib" && name != "main").then_some(name)
            })
            .collect();
        let graph = crate_graph(&src, |name| modules.contains(name));
        if let Some(cycle) = find_cycle(&graph) {
            panic!("import cycle in {}: {}", src.display(), cycle.join(" -> "));
        }
        checked += 1;
    }
    assert!(
        checked >= 3,
        "found only {checked} crates under {}",
        crates.display()
    );
}

#[test]
fn the_scanner_sees_imports() {
    let paths = crate_paths(
        "use crate::models::flow_lm::FlowLm;\nuse crate::{Error, Result};\n// crate::fast\n",
    );
    assert_eq!(
        paths.into_iter().collect::<Vec<_>>(),
        ["Error", "Result", "models"]
    );
}
