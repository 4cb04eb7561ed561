"""Many threads on one model: each call gives its solo audio."""

import threading

import numpy as np

TEXTS = [
    "Hello there.",
    "The weather is lovely today.",
    "Shall we take a long walk along the river?",
    "One, two, three.",
    "Count with me slowly until we reach ten.",
    "Well done.",
    "A tiny model speaks quickly.",
    "Goodbye, and thanks for listening.",
]


def test_eight_threads_each_equal_their_solo_run(model, state):
    solo = [model.generate_audio(state, t) for t in TEXTS]
    results = [None] * len(TEXTS)
    errors = []
    barrier = threading.Barrier(len(TEXTS))

    def run(i):
        try:
            barrier.wait()
            results[i] = model.generate_audio(state, TEXTS[i])
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(TEXTS))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for i, (a, b) in enumerate(zip(solo, results)):
        assert b is not None, f"thread {i} did not finish"
        np.testing.assert_array_equal(a, b, err_msg=f"text {i}: {TEXTS[i]!r}")
    assert model.busy()[2] == 0


def test_streams_interleaved_on_one_thread_equal_their_solo_runs(model, state):
    solo = [model.generate_audio(state, t) for t in TEXTS[:3]]
    streams = [model.generate_audio_stream(state, t) for t in TEXTS[:3]]
    got = [[] for _ in streams]
    live = list(range(len(streams)))
    while live:
        for i in list(live):
            chunk = next(streams[i], None)
            if chunk is None:
                live.remove(i)
            else:
                got[i].append(chunk)
    for a, chunks in zip(solo, got):
        np.testing.assert_array_equal(a, np.concatenate(chunks))
