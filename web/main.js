// The page: reads the model files (picked, or fetched from this origin when the URL names
// them: ?weights=…&tokenizer=…&config=…&voice=…), hands them to the model's worker, plays
// each frame as it arrives (scheduled Web Audio buffers) and offers the WAV.
//
// `window.pocketTts` reports progress for tests and curious users: phase, error, the
// samples of the last generation, time to first audio, frames.

const $ = (id) => document.getElementById(id);
const worker = new Worker("worker.js", { type: "module" });
const state = {
  phase: "idle", // idle | loading | loaded | voice | generating | done | cancelled | error
  error: "",
  sampleRate: 24000,
  loadMs: null,
  firstAudioMs: null,
  // In the worker: generate() call, text prefill, first FlowLM step, first Mimi frame (ms).
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
  worker.postMessage({
    type: "load",
    weights: weights.bytes,
    weightsName: weights.name,
    tokenizer: tokenizer.bytes,
    tokenizerName: tokenizer.name,
    config: config ? new TextDecoder().decode(config.bytes) : null,
    quantize,
  }, [weights.bytes, tokenizer.bytes]);
}

function loadVoice(voice) {
  state.hasVoice = false;
  state.phase = "voice";
  clearError();
  refresh();
  status(`Reading the voice ${voice.name}…`);
  progress(voice.name.toLowerCase().endsWith(".safetensors") ? "Reading the voice state" : "Encoding the voice prompt");
  worker.postMessage({ type: "voice", name: voice.name, bytes: voice.bytes }, [voice.bytes]);
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
  worker.postMessage({ type: "generate", id: genId, text, temperature, seed });
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

worker.onmessage = (ev) => {
  const m = ev.data;
  switch (m.type) {
    case "loaded":
      modelReady = true;
      state.loadMs = m.ms;
      state.sampleRate = m.sampleRate;
      state.phase = "loaded";
      if (!params.has("temperature")) $("temperature").value = m.defaultTemperature;
      status(`Model loaded in ${(m.ms / 1000).toFixed(1)} s. Pick a voice.`);
      progress(null);
      if (pendingVoice) {
        loadVoice(pendingVoice);
        pendingVoice = null;
      }
      break;
    case "voice":
      state.hasVoice = true;
      state.phase = "loaded";
      state.voiceMs = m.ms;
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
      if (m.id === genId) finish(m.cancelled);
      break;
    case "error":
      if (m.what === "load") modelReady = false;
      if (m.what === "voice") state.hasVoice = false;
      showError(m.what, m.message);
      break;
  }
  refresh();
};
worker.onerror = (e) => showError("worker", e.message || "the worker failed to start");

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
$("stop").onclick = () => worker.postMessage({ type: "cancel" });

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
