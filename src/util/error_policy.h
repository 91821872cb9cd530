// What a reader does with a bad element (corrupt record, undecodable image).
#pragma once

#include <string>

namespace imgpipe {

enum class ErrorPolicy {
  kFail,  // throw a DataError naming the file and offset
  kSkip,  // skip the element, count it, log the first few
};

// Parses "fail" or "skip"; throws Error otherwise.
ErrorPolicy ParseErrorPolicy(const std::string& name);
const char* ErrorPolicyName(ErrorPolicy policy);

}  // namespace imgpipe
