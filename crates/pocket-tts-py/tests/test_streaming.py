"""Streaming: the chunks are the whole generation; stop, close and drop end the work."""

import asyncio
import gc
import threading
import time

import numpy as np

TEXT = "One, two, three. Count with me slowly until we reach ten. Well done."


def wait_idle(model, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if model.busy() == (0, 0, 0):
            return True
        time.sleep(0.01)
    return False


def test_stream_equals_whole_generation(model, state):
    chunks = list(model.generate_audio_stream(state, TEXT, max_tokens=12))
    assert all(c.ndim == 1 and c.dtype == np.float32 for c in chunks)
    assert {len(c) for c in chunks} == {1920}
    whole = model.generate_audio(state, TEXT, max_tokens=12)
    np.testing.assert_array_equal(np.concatenate(chunks), whole)


def test_async_stream_equals_whole_generation(model, state):
    async def collect():
        return [c async for c in model.agenerate_audio_stream(state, TEXT, max_tokens=12)]

    chunks = asyncio.run(collect())
    np.testing.assert_array_equal(
        np.concatenate(chunks), model.generate_audio(state, TEXT, max_tokens=12)
    )


def test_stop_event_ends_the_generation(model, state):
    full = len(model.generate_audio(state, TEXT, max_tokens=12))
    stop = threading.Event()
    got = []
    for chunk in model.generate_audio_stream(state, TEXT, max_tokens=12, stop=stop):
        got.append(chunk)
        if len(got) == 2:
            stop.set()
    assert len(got) == 2 and 2 * 1920 < full
    assert wait_idle(model)


def test_stop_event_set_while_nobody_reads_stops_the_work(model, state):
    stop = threading.Event()
    stream = model.generate_audio_stream(state, TEXT * 4, max_tokens=12, stop=stop)
    next(stream)
    stop.set()
    assert wait_idle(model), model.busy()
    assert next(stream, None) is None


def test_dropped_iterator_ends_the_work(model, state):
    stream = model.generate_audio_stream(state, TEXT * 4, max_tokens=12)
    next(stream)
    assert model.busy() != (0, 0, 0)
    del stream
    gc.collect()
    assert wait_idle(model), model.busy()


def test_break_out_of_the_loop_ends_the_work(model, state):
    for _ in model.generate_audio_stream(state, TEXT * 4, max_tokens=12):
        break
    gc.collect()
    assert wait_idle(model), model.busy()


def test_cancelled_async_task_ends_the_work(model, state):
    async def run():
        async def consume():
            async for _ in model.agenerate_audio_stream(state, TEXT * 4, max_tokens=12):
                await asyncio.sleep(0)

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.2)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(run())
    gc.collect()
    assert wait_idle(model), model.busy()
