#include "util/error_policy.h"

#include "util/error.h"

namespace imgpipe {

ErrorPolicy ParseErrorPolicy(const std::string& name) {
  if (name == "fail") return ErrorPolicy::kFail;
  if (name == "skip") return ErrorPolicy::kSkip;
  throw InvalidArgument("unknown error policy '" + name + "' (expected fail or skip)");
}

const char* ErrorPolicyName(ErrorPolicy policy) {
  return policy == ErrorPolicy::kFail ? "fail" : "skip";
}

}  // namespace imgpipe
