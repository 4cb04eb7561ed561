// The page: reads the model files (picked, or fetched from this origin when the URL names
// them: ?weights=…&tokenizer=…&config=…&voice=…), splits the checkpoint in two and hands
// each part to its Web Worker: flowlm-worker.js (text to latents) and mimi-worker.js
// (latents to audio, and voice prompts to latents), joined by a MessageChannel so that
// each frame's latent goes straight from one to the other and two cores work. Plays each
// frame as it arrives (scheduled Web Audio buffers) and offers the WAV.
//
// `window.pocketTts` reports progress for tests and curious users: phase, error, the
// samples of the last generation, time to first audio, frames.

const $ = (id) => document.getElementById(id);
const flowLm = new Worker("flowlm-worker.js", { type: "module" });
const mimi = new Worker("mimi-worker.js", { type: "module" });
{
  const link = new MessageChannel();
  flowLm.postMessage({ type: "port", port: link.port1 }, [link.port1]);
  mimi.postMessage({ type: "port", port: link.port2 }, [link.port2]);
}
const state = {
  phase: "idle", // idle | loading | loaded | voice | generating | done | cancelled | error
  error: "",
  sampleRate: 24000,
  loadMs: null,
  firstAudioMs: null,
  // In the workers (ms): generate() call, text prefill, first FlowLM step, the FlowLM
  // worker's time to its first latent, the first Mimi frame.
  firstAudioParts: null,
  generateMs: null,
  frames: 0,
  samples: null,
  hasVoice: false,
  voiceMs: null,
};
window.pocketTts = state;

let audio = null;
let nextTime = 0;
let chunks = [];
let genId = 0;
let startedAt = 0;
let wavUrl = null;

function status(text) {
  $("status").textContent = text;
}

// The one-line progress indicator: a bar (with `fraction`, else moving) and a text with
// the seconds elapsed, ticking until `progress(null)`.
let progressTimer = null;
let progressSince = 0;
let progressLabel = "";
function progress(label, fraction) {
  if (label === null) {
    clearInterval(progressTimer);
    progressTimer = null;
    $("busy").hidden = true;
    return;
  }
  // The clock restarts when the step changes (the text before a colon), not as a byte
  // count in the text moves.
  if (label.split(":")[0] !== progressLabel.split(":")[0] || progressTimer === null) {
    progressSince = performance.now();
  }
  progressLabel = label;
  const bar = $("progress");
  if (fraction === undefined) bar.removeAttribute("value");
  else bar.value = fraction;
  const tick = () => {
    const s = ((performance.now() - progressSince) / 1000).toFixed(0);
    $("progress-text").textContent = `${progressLabel} (${s} s)`;
  };
  tick();
  if (progressTimer === null) progressTimer = setInterval(tick, 500);
  $("busy").hidden = false;
}

function showError(what, message) {
  const line = `${what}: ${message}`.split(/\r?\n/).join(" ");
  state.error = line;
  state.phase = "error";
  progress(null);
  $("error").textContent = line;
  $("error").title = line;
  status("");
  refresh();
}

function clearError() {
  state.error = "";
  $("error").textContent = "";
}

function refresh() {
  const generating = state.phase === "generating";
  $("speak").disabled = !(state.hasVoice && !generating && state.sampleRate && modelReady);
  $("stop").disabled = !generating;
}

let modelReady = false;

async function readPicked(input) {
  const f = input.files[0];
  return f ? { name: f.name, bytes: await f.arrayBuffer() } : null;
}

// Bytes fetched so far and expected in all, over the files being fetched.
const fetched = { got: 0, total: 0 };

// The safetensors checkpoint `bytes` (an ArrayBuffer; `name` names it in errors) split
// in two checkpoints: the FlowLM's (`flow_lm.` tensors) and Mimi's (`mimi.` tensors, and
// `flow_lm.emb_std` and `flow_lm.emb_mean`, which Mimi's worker needs to denormalise the
// latents), each with the file's metadata. Each worker then gets only its weights.
function splitCheckpoint(bytes, name) {
  const bad = (why) => new Error(`${name} is not a readable safetensors checkpoint: ${why}`);
  if (bytes.byteLength < 8) throw bad("shorter than its header");
  const view = new DataView(bytes);
  const headerLen = Number(view.getBigUint64(0, true));
  if (headerLen > bytes.byteLength - 8) throw bad("header too large");
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 8, headerLen)));
  } catch (e) {
    throw bad(`header: ${e.message}`);
  }
  const data = 8 + headerLen;
  const part = (keep) => {
    const names = Object.keys(header).filter((k) => k !== "__metadata__" && keep(k));
    const out = {};
    if (header.__metadata__) out.__metadata__ = header.__metadata__;
    let size = 0;
    for (const k of names) {
      const [b, e] = header[k].data_offsets ?? [];
      if (!(Number.isInteger(b) && Number.isInteger(e) && b <= e && data + e <= bytes.byteLength)) {
        throw bad(`tensor ${k}: data_offsets out of the file`);
      }
      out[k] = { ...header[k], data_offsets: [size, size + e - b] };
      size += e - b;
    }
    const json = new TextEncoder().encode(JSON.stringify(out));
    const padded = Math.ceil(json.length / 8) * 8;
    const buf = new Uint8Array(8 + padded + size);
    new DataView(buf.buffer).setBigUint64(0, BigInt(padded), true);
    buf.fill(0x20, 8, 8 + padded);
    buf.set(json, 8);
    for (const k of names) {
      const [b, e] = header[k].data_offsets;
      buf.set(new Uint8Array(bytes, data + b, e - b), 8 + padded + out[k].data_offsets[0]);
    }
    return buf.buffer;
  };
  return {
    flowLm: part((k) => k.startsWith("flow_lm.")),
    mimi: part((k) => k.startsWith("mimi.") || k === "flow_lm.emb_std" || k === "flow_lm.emb_mean"),
  };
}

async function fetchNamed(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  const name = url.split("/").pop();
  // Content-Length counts the encoded bytes: with a Content-Encoding it is not the size.
  const total = r.headers.get("Content-Encoding") ? 0 : Number(r.headers.get("Content-Length")) || 0;
  if (!r.body || !total) return { name, bytes: await r.arrayBuffer() };
  fetched.total += total;
  const bytes = new Uint8Array(total);
  let at = 0;
  const reader = r.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.length > total) throw new Error(`${url}: more bytes than its Content-Length`);
    bytes.set(value, at);
    at += value.length;
    fetched.got += value.length;
    progress(`Fetching the model files: ${(fetched.got / 1e6).toFixed(0)} of ${(fetched.total / 1e6).toFixed(0)} MB`,
      fetched.got / fetched.total);
  }
  if (at !== total) throw new Error(`${url}: ${at} bytes of ${total}`);
  return { name, bytes: bytes.buffer };
}

function loadModel(weights, tokenizer, config, quantize) {
  modelReady = false;
  state.hasVoice = false;
  state.phase = "loading";
  clearError();
  refresh();
  status(`Loading ${weights.name} (${(weights.bytes.byteLength / 1e6).toFixed(1)} MB)…`);
  progress(`Loading the model${quantize ? " (int8 weights computed at load)" : ""}`);
  let parts;
  try {
    parts = splitCheckpoint(weights.bytes, weights.name);
  } catch (e) {
    showError("load", e.message);
    return;
  }
  const configText = config ? new TextDecoder().decode(config.bytes) : null;
  loading = { flowLm: null, mimi: null, started: performance.now() };
  flowLm.postMessage({
    type: "load",
    weights: parts.flowLm,
    weightsName: weights.name,
    tokenizer: tokenizer.bytes,
    tokenizerName: tokenizer.name,
    config: configText,
    quantize,
  }, [parts.flowLm, tokenizer.bytes]);
  mimi.postMessage({ type: "load", weights: parts.mimi, weightsName: weights.name, config: configText },
    [parts.mimi]);
}

// The two workers' "loaded" messages of the load under way.
let loading = null;

function loadVoice(voice) {
  state.hasVoice = false;
  state.phase = "voice";
  clearError();
  refresh();
  status(`Reading the voice ${voice.name}…`);
  voiceStarted = performance.now();
  if (voice.name.toLowerCase().endsWith(".safetensors")) {
    progress("Reading the voice state");
    flowLm.postMessage({ type: "voice", name: voice.name, bytes: voice.bytes }, [voice.bytes]);
  } else {
    // Mimi encodes the prompt; the FlowLM is prompted with its latents.
    progress("Encoding the voice prompt");
    mimi.postMessage({ type: "encode", name: voice.name, bytes: voice.bytes }, [voice.bytes]);
  }
}

function speak(text, temperature, seed) {
  clearError();
  if (!audio) audio = new AudioContext({ sampleRate: state.sampleRate });
  audio.resume();
  nextTime = 0;
  chunks = [];
  state.samples = null;
  state.firstAudioMs = null;
  state.firstAudioParts = null;
  state.frames = 0;
  state.phase = "generating";
  $("download").hidden = true;
  genId += 1;
  startedAt = performance.now();
  flowLm.postMessage({ type: "generate", id: genId, text, temperature, seed });
  status("Generating…");
  refresh();
}

function play(samples) {
  const buffer = audio.createBuffer(1, samples.length, state.sampleRate);
  buffer.copyToChannel(samples, 0);
  const src = audio.createBufferSource();
  src.buffer = buffer;
  src.connect(audio.destination);
  const at = Math.max(audio.currentTime + 0.05, nextTime);
  src.start(at);
  nextTime = at + buffer.duration;
}

// 16-bit PCM mono WAV of `samples` (clipped to [-1, 1]).
function wav(samples, rate) {
  const out = new DataView(new ArrayBuffer(44 + samples.length * 2));
  const text = (o, s) => [...s].forEach((c, i) => out.setUint8(o + i, c.charCodeAt(0)));
  text(0, "RIFF");
  out.setUint32(4, 36 + samples.length * 2, true);
  text(8, "WAVEfmt ");
  out.setUint32(16, 16, true);
  out.setUint16(20, 1, true);
  out.setUint16(22, 1, true);
  out.setUint32(24, rate, true);
  out.setUint32(28, rate * 2, true);
  out.setUint16(32, 2, true);
  out.setUint16(34, 16, true);
  text(36, "data");
  out.setUint32(40, samples.length * 2, true);
  samples.forEach((s, i) => out.setInt16(44 + 2 * i, Math.round(Math.max(-1, Math.min(1, s)) * 32767), true));
  return new Blob([out.buffer], { type: "audio/wav" });
}

function finish(cancelled) {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const all = new Float32Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  state.samples = all;
  state.generateMs = performance.now() - startedAt;
  state.phase = cancelled ? "cancelled" : "done";
  if (wavUrl) URL.revokeObjectURL(wavUrl);
  wavUrl = URL.createObjectURL(wav(all, state.sampleRate));
  $("download").href = wavUrl;
  $("download").hidden = total === 0;
  const seconds = total / state.sampleRate;
  status(`${cancelled ? "Stopped" : "Done"}: ${seconds.toFixed(2)} s of audio in ` +
    `${(state.generateMs / 1000).toFixed(2)} s (first audio after ${state.firstAudioMs?.toFixed(0) ?? "-"} ms).`);
  refresh();
}

let voiceStarted = 0;

function onWorkerMessage(ev) {
  const m = ev.data;
  switch (m.type) {
    case "loaded":
      if (!loading) return;
      if (ev.target === flowLm) {
        loading.flowLm = m;
      } else {
        loading.mimi = m;
        state.sampleRate = m.sampleRate;
      }
      if (!(loading.flowLm && loading.mimi)) return;
      modelReady = true;
      // Both parts load at once; the page waits for the longer.
      state.loadMs = Math.max(loading.flowLm.ms, loading.mimi.ms);
      state.loadParts = { flowLmMs: loading.flowLm.ms, mimiMs: loading.mimi.ms };
      loading = null;
      state.phase = "loaded";
      if (!params.has("temperature")) $("temperature").value = state.defaultTemperature ?? $("temperature").value;
      status(`Model loaded in ${(state.loadMs / 1000).toFixed(1)} s. Pick a voice.`);
      progress(null);
      if (pendingVoice) {
        loadVoice(pendingVoice);
        pendingVoice = null;
      }
      break;
    case "latents":
      progress("Prompting the FlowLM with the voice");
      flowLm.postMessage({ type: "voice", latents: m.latents, dim: m.dim }, [m.latents.buffer]);
      break;
    case "voice":
      state.hasVoice = true;
      state.phase = "loaded";
      state.voiceMs = performance.now() - voiceStarted;
      progress(null);
      status(`Voice ready (${m.frames} frames). Type a text and speak.`);
      break;
    case "frame":
      if (m.id !== genId) return;
      if (state.firstAudioMs === null) state.firstAudioMs = performance.now() - startedAt;
      if (m.timings) state.firstAudioParts = m.timings;
      state.frames += 1;
      chunks.push(m.samples);
      play(m.samples);
      status(`Generating… ${(chunks.length * 0.08).toFixed(2)} s of audio`);
      break;
    case "done":
      state.wasmMemory = m.memory;
      if (m.id === genId) finish(m.cancelled);
      break;
    case "error":
      if (m.what === "load") {
        modelReady = false;
        loading = null;
      }
      if (m.what === "voice") state.hasVoice = false;
      showError(m.what, m.message);
      break;
  }
  refresh();
}

flowLm.onmessage = (ev) => {
  if (ev.data.type === "loaded") state.defaultTemperature = ev.data.defaultTemperature;
  onWorkerMessage(ev);
};
mimi.onmessage = onWorkerMessage;
flowLm.onerror = (e) => showError("worker", e.message || "the FlowLM worker failed to start");
mimi.onerror = (e) => showError("worker", e.message || "the Mimi worker failed to start");

let pendingVoice = null;

$("load").onclick = async () => {
  try {
    const weights = await readPicked($("weights"));
    const tokenizer = await readPicked($("tokenizer"));
    if (!weights || !tokenizer) {
      showError("load", "pick the checkpoint (.safetensors) and the tokenizer file first");
      return;
    }
    loadModel(weights, tokenizer, await readPicked($("config")), $("quantize").checked);
  } catch (e) {
    showError("load", e.message);
  }
};
$("voice").onchange = async () => {
  const v = await readPicked($("voice"));
  if (!v) return;
  if (modelReady) loadVoice(v);
  else pendingVoice = v;
};
$("speak").onclick = () => {
  const t = parseFloat($("temperature").value);
  speak($("text").value, Number.isFinite(t) ? t : undefined, seedParam);
};
// Both stop: the FlowLM after its current step, Mimi drops the latents still queued.
$("stop").onclick = () => {
  flowLm.postMessage({ type: "cancel", id: genId });
  mimi.postMessage({ type: "cancel", id: genId });
};

// Files named in the URL are fetched from this origin (a deployment with its model beside
// the page, and the browser test).
const params = new URLSearchParams(location.search);
const seedParam = params.has("seed") ? parseInt(params.get("seed"), 10) : undefined;
if (params.has("text")) $("text").value = params.get("text");
if (params.has("temperature")) $("temperature").value = params.get("temperature");
// The service worker (sw.js) keeps the page, and the files it fetches from this origin,
// for offline use. `?sw=0` goes without it.
async function offlineReady() {
  if (!("serviceWorker" in navigator) || params.get("sw") === "0") return "unsupported";
  try {
    await navigator.serviceWorker.register("sw.js");
    if (!navigator.serviceWorker.controller) {
      // A first visit: the worker claims this page once active; the files fetched after
      // that are cached. Not waited for more than 5 s (the page works without it).
      await Promise.race([
        new Promise((resolve) => navigator.serviceWorker.addEventListener("controllerchange", resolve, { once: true })),
        new Promise((resolve) => setTimeout(resolve, 5000)),
      ]);
    }
    return navigator.serviceWorker.controller ? "controlled" : "registered";
  } catch (e) {
    console.warn(`no offline use: ${e.message}`);
    return "failed";
  }
}
state.serviceWorker = "starting";
const offline = offlineReady().then((s) => (state.serviceWorker = s));

if (params.has("weights") && params.has("tokenizer")) {
  (async () => {
    try {
      await offline;
      const [weights, tokenizer] = await Promise.all([fetchNamed(params.get("weights")), fetchNamed(params.get("tokenizer"))]);
      const config = params.has("config") ? await fetchNamed(params.get("config")) : null;
      if (params.has("voice")) pendingVoice = await fetchNamed(params.get("voice"));
      loadModel(weights, tokenizer, config, params.get("quantize") !== "0");
    } catch (e) {
      showError("load", e.message);
    }
  })();
}
