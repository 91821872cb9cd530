// The median of a few measurements (benchmark rounds), for rates quoted as medians.
#pragma once

#include <algorithm>
#include <vector>

namespace imgpipe {

// Returns the median of `v` (the mean of the two middle values when their count is
// even), 0 when `v` is empty. Throws nothing.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace imgpipe
