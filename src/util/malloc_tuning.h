// glibc malloc settings for programs that allocate many large, short-lived buffers
// (decoded images). By default glibc serves allocations above a dynamic threshold
// (128 KiB to 32 MiB) with mmap/munmap, so every decoded image costs fresh pages,
// page faults and zeroing, and threads contend on the process's memory map: measured
// here, a 2-thread train pipeline went from 1.55x to 1.75x its 1-thread rate with
// these settings. Call once, early in main(); a library never calls it by itself.
#pragma once

namespace imgpipe {

// Keeps large buffers on malloc's heaps (mmap only above 1 GiB), keeps freed memory
// for reuse instead of returning it to the OS at once, and serves threads started
// after the call from one arena. Returns false where the C
// library is not glibc (then nothing changes).
bool TuneMallocForLargeBuffers();

}  // namespace imgpipe
