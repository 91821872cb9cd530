// What the doctor's checks share: appending a check to the report, and the words they
// build details from.
#pragma once

#include <string>
#include <vector>

#include "env/doctor.h"

namespace imgpipe::env {

// Appends one check to the report.
void Add(DoctorReport* r, const char* layer, std::string name, CheckStatus status, std::string detail,
         std::string fix = "");

// "1 GPU", "4 GPUs".
std::string Plural(int n, const char* one, const char* many);

// `parts` with `separator` between them.
std::string Join(const std::vector<std::string>& parts, const char* separator);

}  // namespace imgpipe::env
