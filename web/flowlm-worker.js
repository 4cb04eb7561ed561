// The FlowLM's Web Worker: loads the FlowLM part of the checkpoint (no Mimi weight),
// makes voice states (from a .safetensors voice state, or from the Mimi latents of a
// voice prompt, encoded by the Mimi worker), and generates: one FlowLM step per frame,
// each frame's latent posted at once to the Mimi worker (through `port`, a MessagePort
// the page gives it) which decodes it beside this one. At most MAX_AHEAD latents are
// waiting for Mimi (it acknowledges each frame), as the native decoder thread's queue:
// the FlowLM computes frame n + 1 while Mimi decodes frame n, and a cancel never waits
// behind a long queue. Between frames it returns to its event loop, so that a `cancel`
// is seen within one frame.
import init, { FlowLmModel } from "./pkg/pocket_tts_wasm.js";

let model = null;
let voice = null;
let generation = null;
let port = null;
// The module's exports (its memory: the worker's share of the page's memory).
let wasm = null;
const ready = init().then((w) => (wasm = w));
const MAX_AHEAD = 2;
// Frames the Mimi worker has decoded of the generation under way, and the loop waiting
// for the next one.
let decoded = 0;
let wakeUp = null;
const wake = () => {
  const w = wakeUp;
  wakeUp = null;
  w?.();
};
const nextDecoded = () => new Promise((resolve) => (wakeUp = resolve));

const errorText = (e) => String(e && e.message ? e.message : e).split(/\r?\n/).join(" ");

function fail(what, e) {
  postMessage({ type: "error", what, message: errorText(e) });
}

// A macrotask boundary without setTimeout's 4 ms clamp: a message to ourselves.
const loop = new MessageChannel();
const waiting = [];
loop.port1.onmessage = () => waiting.shift()?.();
const yieldToEvents = () => new Promise((resolve) => {
  waiting.push(resolve);
  loop.port2.postMessage(null);
});

let currentId = -1;

function stopGeneration() {
  if (generation) {
    generation.cancel();
    generation = null;
  }
  wake();
}

async function run(id, text, temperature, seed) {
  const started = performance.now();
  try {
    // A generation still running is stopped; its own loop frees it.
    if (generation) generation.cancel();
    generation = null;
    wake();
    generation = model.generate(voice, text, temperature, seed);
    decoded = 0;
  } catch (e) {
    generation = null;
    fail("generate", e);
    port.postMessage({ type: "end", id, cancelled: true });
    return;
  }
  const mine = generation;
  const setupMs = performance.now() - started;
  port.postMessage({ type: "start", id });
  let frames = 0;
  while (generation === mine) {
    let f;
    try {
      f = mine.nextLatent();
    } catch (e) {
      generation = null;
      fail("generate", e);
      break;
    }
    if (f === undefined) break;
    const latent = new Float32Array(f.latent);
    const m = { type: "latent", id, chunk: f.chunk, frame: f.frame, pause: f.pause, latent };
    f.free();
    if (frames === 0) {
      // Where the first frame's time went, on this side (the Mimi worker adds its part).
      m.timings = { setupMs, prefillMs: mine.prefillMs, firstStepMs: mine.firstStepMs,
        flowLmFirstMs: performance.now() - started };
    }
    frames += 1;
    port.postMessage(m, [latent.buffer]);
    await yieldToEvents();
    while (generation === mine && frames - decoded >= MAX_AHEAD) await nextDecoded();
  }
  const cancelled = generation !== mine;
  if (!cancelled) generation = null;
  mine.free();
  port.postMessage({ type: "end", id, cancelled, frames, ms: performance.now() - started,
    memoryBytes: wasm.memory.buffer.byteLength });
}

onmessage = async (ev) => {
  const m = ev.data;
  if (m.type === "port") {
    port = m.port;
    port.onmessage = (e) => {
      const d = e.data;
      if (d.type === "decoded" && d.id === currentId) {
        decoded = d.frames;
        wake();
      } else if (d.type === "stop" && d.id === currentId) {
        // Mimi failed on this generation: stop it.
        stopGeneration();
      }
    };
    return;
  }
  await ready;
  switch (m.type) {
    case "load":
      try {
        const t0 = performance.now();
        if (model) model.free();
        model = null;
        voice = null;
        model = new FlowLmModel(m.config ?? undefined, new Uint8Array(m.weights), m.weightsName,
          new Uint8Array(m.tokenizer), m.tokenizerName, m.quantize);
        postMessage({ type: "loaded", ms: performance.now() - t0, defaultTemperature: model.defaultTemperature });
      } catch (e) {
        fail("load", e);
      }
      break;
    case "voice":
      try {
        const t0 = performance.now();
        const v = m.latents
          ? model.voiceFromLatents(m.latents, m.dim)
          : model.voiceFromSafetensors(new Uint8Array(m.bytes), m.name);
        if (voice) voice.free();
        voice = v;
        postMessage({ type: "voice", frames: voice.frames, ms: performance.now() - t0 });
      } catch (e) {
        fail("voice", e);
      }
      break;
    case "generate":
      currentId = m.id;
      run(m.id, m.text, m.temperature, m.seed);
      break;
    case "cancel":
      stopGeneration();
      break;
  }
};
