//! The process's memory: handing freed heap memory back to the operating system, so that
//! the resident set (what `--stats-json` reports as peak RSS) follows what the model holds.

/// Hands the heap memory freed while loading back to the operating system (glibc's
/// `malloc_trim(0)`, which also releases whole free pages inside the heap). Loading frees
/// large temporaries (the Candle Mimi once repacked, each `f32` weight once quantized), and
/// glibc otherwise keeps their pages for later allocations: about 20 MB of resident set at
/// full size with `--quantize`. Only resident memory changes, never content. A no-op
/// outside Linux with glibc.
pub(crate) fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions; it only returns free heap pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Asks the C allocator to hand every large freed block (128 KiB or more) back to the
/// operating system at once, for the rest of the process (glibc: `mallopt` with a fixed
/// `M_MMAP_THRESHOLD`, which also stops glibc from raising that threshold each time a
/// large block is freed, after which freed blocks would stay resident). Loading frees
/// large temporaries and a generation frees the voice state it copied: with this, the peak
/// resident memory of `--quantize q4` with a voice state is 6 MiB lower (OPTIMIZATION_LOG.md
/// §38). Each large allocation then costs a `mmap` and page faults on fresh pages, every
/// time: a program that generates many times (a server) loses a little time on each new
/// generation's state, so this suits one-shot programs (the CLI's `generate` calls it
/// first thing). Not for a library to impose: call it once, before loading. A no-op
/// outside Linux with glibc.
pub fn return_freed_memory_promptly() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt has no preconditions; it only changes the allocator's policy.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}
