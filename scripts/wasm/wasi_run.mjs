// Runs a wasm32-wasip1 program (a test binary) under Node's WASI: its arguments, the
// environment, the working directory preopened as `.`; exits with its exit code.
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";

const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: "preview1", args: [file, ...args], env: process.env,
  preopens: { ".": process.cwd() }, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
