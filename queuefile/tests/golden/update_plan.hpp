// The in-place updates the golden tests make to a queue file (every third
// recipient marked done, the warning time set to -1, the trace_flags record
// killed) and what postcat must show afterwards.
#pragma once

#include "postcat_compare.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cqmgr::queuefile::golden {

struct UpdatePlan {
    std::vector<int64_t> done_offsets; // 'R' records to mark 'D'
    int64_t warn_offset = 0;           // 'W' record to set to -1 (0: none)
    int64_t trace_offset = 0;          // 'A trace_flags' record to kill (0: none)
};

// Reads the file with read_envelope() and picks the updates; throws
// std::runtime_error when the file cannot be read.
UpdatePlan plan_updates(const std::string& path);

// Applies the plan with the queuefile update API; throws on failure.
void apply_updates(const std::string& path, const UpdatePlan& plan);

// postcat -v lines of the original file, changed as the plan changes them.
std::vector<PostcatLine> expected_after(std::vector<PostcatLine> lines, const UpdatePlan& plan);

} // namespace cqmgr::queuefile::golden
