// Mimi's Web Worker: loads the Mimi part of the checkpoint (no FlowLM weight), encodes
// voice prompts into latents for the FlowLM worker, and decodes the latents the FlowLM
// worker posts to it (through `port`, a MessagePort the page gives it), in order, each
// frame's samples posted to the page at once and acknowledged to the FlowLM worker (which
// stays at most two frames ahead).
import init, { MimiModel } from "./pkg/pocket_tts_wasm.js";

let model = null;
let decoder = null;
let current = null; // the generation being decoded: { id, first, frames }
let link = null; // the port to the FlowLM worker
let cancelled = -1; // the last generation cancelled by the page
let wasm = null;
const ready = init().then((w) => (wasm = w));

const errorText = (e) => String(e && e.message ? e.message : e).split(/\r?\n/).join(" ");

function fail(what, e) {
  postMessage({ type: "error", what, message: errorText(e) });
}

function stop() {
  if (decoder) decoder.free();
  decoder = null;
  current = null;
}

// Messages of the FlowLM worker: start, latent (one per frame, in order), end.
async function fromFlowLm(ev) {
  const m = ev.data;
  await ready;
  switch (m.type) {
    case "start":
      stop();
      if (m.id <= cancelled) return;
      try {
        decoder = model.decoder();
        current = { id: m.id, first: true, frames: 0 };
      } catch (e) {
        link.postMessage({ type: "stop", id: m.id });
        fail("generate", e);
      }
      break;
    case "latent": {
      if (!current || current.id !== m.id) return;
      const t0 = performance.now();
      let samples;
      try {
        samples = decoder.decode(m.chunk, m.frame, m.pause, m.latent);
      } catch (e) {
        stop();
        link.postMessage({ type: "stop", id: m.id });
        fail("generate", e);
        return;
      }
      current.frames += 1;
      link.postMessage({ type: "decoded", id: m.id, frames: current.frames });
      const out = { type: "frame", id: m.id, samples };
      if (current.first) {
        current.first = false;
        out.timings = { ...m.timings, firstDecodeMs: performance.now() - t0 };
      }
      postMessage(out, [samples.buffer]);
      break;
    }
    case "end":
      if (current && current.id === m.id) stop();
      // Each worker's wasm memory (its high-water mark: wasm memory never shrinks).
      postMessage({ type: "done", id: m.id, cancelled: m.cancelled || m.id <= cancelled,
        memory: { flowLmBytes: m.memoryBytes, mimiBytes: wasm.memory.buffer.byteLength } });
      break;
  }
}

onmessage = async (ev) => {
  const m = ev.data;
  if (m.type === "port") {
    link = m.port;
    link.onmessage = fromFlowLm;
    return;
  }
  await ready;
  switch (m.type) {
    case "load":
      try {
        const t0 = performance.now();
        stop();
        if (model) model.free();
        model = null;
        model = new MimiModel(m.config ?? undefined, new Uint8Array(m.weights), m.weightsName);
        postMessage({ type: "loaded", ms: performance.now() - t0, sampleRate: model.sampleRate });
      } catch (e) {
        fail("load", e);
      }
      break;
    case "encode":
      try {
        const t0 = performance.now();
        const l = model.voiceLatents(new Uint8Array(m.bytes), m.name);
        const latents = new Float32Array(l.values);
        const dim = l.dim;
        l.free();
        postMessage({ type: "latents", latents, dim, ms: performance.now() - t0 }, [latents.buffer]);
      } catch (e) {
        fail("voice", e);
      }
      break;
    case "cancel":
      // Latents of this generation still queued are dropped; its `end` reports the cancel.
      cancelled = Math.max(cancelled, m.id);
      if (current && current.id <= cancelled) stop();
      break;
  }
};
