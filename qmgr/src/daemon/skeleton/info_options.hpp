// The options someone types to learn about cqmgr (--version, --help):
// master(8) never passes them, so they are answered before anything else.
#pragma once
#include <string_view>

namespace cqmgr::qmgr {

// Answers --version and --help on standard output; true when `arg` was one
// of them.  `version` is the release ("1.2.3").
bool answer_info_option(const char* arg, std::string_view version);

} // namespace cqmgr::qmgr
