//! The C allocator's settings for the one-shot commands (`generate`, `stream`,
//! `export-voice`): peak resident memory (issue 26, OPTIMIZATION_LOG §37).

/// Has glibc's `malloc` serve every block of 128 KiB or more with its own mapping, handed
/// back to the system when freed (`mallopt(M_MMAP_THRESHOLD, 128 KiB)`). By default glibc
/// raises that threshold each time such a block is freed (up to 32 MiB), after which the
/// large temporaries of loading and voice encoding come from the heap and stay resident
/// once freed: about 12 MiB of peak resident memory at full size with an audio voice.
/// Only where memory lives changes, never a value. A no-op outside Linux with glibc.
pub fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt has no preconditions; it only changes a tuning parameter of the
    // allocator (under the allocator's own lock).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}
