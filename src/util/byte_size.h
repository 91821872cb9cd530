// Byte counts for people, in binary units: the one formatter of doctor's report, the
// Loader's memory errors and any other message that states a size.
#pragma once

#include <cstdint>
#include <string>

namespace imgpipe {

// `bytes` in the largest binary unit (B, KiB, MiB, GiB, TiB, PiB) that keeps the value
// at least 1, one decimal above bytes: "12 B", "600.0 KiB", "1.5 GiB".
std::string FormatBytes(uint64_t bytes);

}  // namespace imgpipe
