// The seconds a side's record counts (load_seconds, run_seconds): one clock for side.cc and
// side_pair.cc.
#pragma once

#include <chrono>

namespace convgate::session {

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace convgate::session
