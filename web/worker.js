// The model's Web Worker: loads the WebAssembly core, builds the model and the voice from
// the files' bytes, and generates frame by frame, posting each frame as soon as it is
// decoded. Between frames it returns to its event loop, so that a `cancel` message is
// seen within one frame (80 ms of audio). The FlowLM and Mimi both run here (one worker).
import init, { Model } from "./pkg/pocket_tts_wasm.js";

let model = null;
let voice = null;
let generation = null;
let ready = init();

const errorText = (e) => String(e && e.message ? e.message : e).split(/\r?\n/).join(" ");

function fail(what, e) {
  postMessage({ type: "error", what, message: errorText(e) });
}

// A macrotask boundary, so that queued messages (cancel) are handled between frames.
const yieldToEvents = () => new Promise((resolve) => setTimeout(resolve, 0));

async function run(id, text, temperature, seed) {
  const started = performance.now();
  try {
    // A generation still running is stopped; its own loop frees it.
    if (generation) generation.cancel();
    generation = model.generate(voice, text, temperature, seed);
  } catch (e) {
    generation = null;
    fail("generate", e);
    return;
  }
  const mine = generation;
  const setupMs = performance.now() - started;
  let frames = 0;
  let firstMs = null;
  while (generation === mine) {
    let samples;
    try {
      samples = mine.nextFrame();
    } catch (e) {
      generation = null;
      fail("generate", e);
      return;
    }
    if (samples === undefined) break;
    frames += 1;
    let timings;
    if (firstMs === null) {
      firstMs = performance.now() - started;
      // Where the first frame's time went (the page shows it, the measurements print it).
      timings = { setupMs, prefillMs: mine.prefillMs, firstStepMs: mine.firstStepMs,
        firstDecodeMs: mine.firstDecodeMs, workerFirstMs: firstMs };
    }
    postMessage({ type: "frame", id, samples, timings }, [samples.buffer]);
    await yieldToEvents();
  }
  const cancelled = generation !== mine;
  if (!cancelled) generation = null;
  mine.free();
  postMessage({ type: "done", id, frames, cancelled, firstMs, ms: performance.now() - started });
}

onmessage = async (ev) => {
  const m = ev.data;
  await ready;
  switch (m.type) {
    case "load":
      try {
        const t0 = performance.now();
        if (model) model.free();
        model = null;
        voice = null;
        model = new Model(m.config ?? undefined, new Uint8Array(m.weights), m.weightsName,
          new Uint8Array(m.tokenizer), m.tokenizerName, m.quantize);
        postMessage({ type: "loaded", ms: performance.now() - t0, sampleRate: model.sampleRate,
          defaultTemperature: model.defaultTemperature });
      } catch (e) {
        fail("load", e);
      }
      break;
    case "voice":
      try {
        const t0 = performance.now();
        const bytes = new Uint8Array(m.bytes);
        const v = m.name.toLowerCase().endsWith(".safetensors")
          ? model.voiceFromSafetensors(bytes, m.name)
          : model.voiceFromAudio(bytes, m.name);
        if (voice) voice.free();
        voice = v;
        postMessage({ type: "voice", frames: voice.frames, ms: performance.now() - t0 });
      } catch (e) {
        fail("voice", e);
      }
      break;
    case "generate":
      run(m.id, m.text, m.temperature, m.seed);
      break;
    case "cancel":
      if (generation) {
        generation.cancel();
        generation = null;
      }
      break;
  }
};
