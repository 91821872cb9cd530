#include "env/check_list.h"

namespace imgpipe::env {

void Add(DoctorReport* r, const char* layer, std::string name, CheckStatus status, std::string detail,
         std::string fix) {
  r->checks.push_back({layer, std::move(name), status, std::move(detail), std::move(fix)});
}

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

}  // namespace imgpipe::env
